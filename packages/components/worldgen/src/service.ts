import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { defineComponent } from "@flaplab/component";
import {
  GenerateWorldResponseSchema,
  type Pipe,
  PipeSchema,
  WorldGenService,
  WorldSchema,
  type Viewport,
} from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { generateWorld, randomSeed } from "./generate.js";
import { WORLD_LIMITS } from "./limits.js";

const PIPE = PipeSchema.typeName as Pipe["$typeName"];

/** Smallest width and height for which every seed generates a world (Go panics below). */
export const MIN_VIEWPORT_WIDTH = WORLD_LIMITS.minViewportWidth;
export const MIN_VIEWPORT_HEIGHT = WORLD_LIMITS.minViewportHeight;
/** Largest accepted width and height, in px. */
export const MAX_VIEWPORT_SIZE = WORLD_LIMITS.maxViewportSize;

/** GenerateWorld is internal: the initiator asks for a game's world. */
export const worldgenComponent = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"], callers: { GenerateWorld: ["initiator"] }, calls: [] });

export interface WorldGenDeps {
  /** Draws the seed when a request has none; defaults to a crypto-random positive int64. */
  randomSeed?: () => bigint;
}

function checkViewport(viewport: Viewport | undefined): Viewport {
  if (!viewport) {
    throw new ConnectError("viewport is required", Code.InvalidArgument);
  }
  const check = (what: string, value: number, min: number): void => {
    if (!Number.isInteger(value) || value < min || value > MAX_VIEWPORT_SIZE) {
      throw new ConnectError(
        `viewport ${what} must be between ${min} and ${MAX_VIEWPORT_SIZE} px, got ${value}`,
        Code.InvalidArgument,
      );
    }
  };
  check("width", viewport.width, MIN_VIEWPORT_WIDTH);
  check("height", viewport.height, MIN_VIEWPORT_HEIGHT);
  return viewport;
}

/** The WorldGenService handler: FlappyGo's world for the request's seed, or for a fresh random one. */
export function createWorldGen(deps: WorldGenDeps = {}): ServiceImpl<typeof WorldGenService> {
  const drawSeed = deps.randomSeed ?? randomSeed;
  return {
    generateWorld(request) {
      const viewport = checkViewport(request.viewport);
      const seed = request.seed ?? drawSeed();
      const spec = generateWorld(seed, { width: viewport.width, height: viewport.height });
      // The pipes as messages already: create() would copy each of the hundred again.
      const pipes: Pipe[] = spec.pipes.map((p) => ({ $typeName: PIPE, gapStart: p.gapStart, gapHeight: p.gapHeight }));
      return create(GenerateWorldResponseSchema, {
        world: create(WorldSchema, {
          seed: spec.seed,
          viewport: { width: spec.viewport.width, height: spec.viewport.height },
          pipeSpacing: spec.pipeSpacing,
          pipes,
        }),
      });
    },
  };
}
