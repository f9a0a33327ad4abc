import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import {
  EngineService,
  HandleInputResponseSchema,
  Key,
  PlayState,
  StartGameResponseSchema,
} from "@flaplab/contracts/engine/v1/engine_pb";
import type { World } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import type { Course, Phase } from "@flaplab/physics";
import { GameTable, checkGameId } from "./games.js";

/** StartGame and HandleInput are internal: worlds come only from the world generator, through the initiator. */
export const engineComponent = defineComponent({
  name: "engine",
  service: EngineService,
  internalMethods: ["StartGame", "HandleInput"],
});

/** Largest world accepted, in pipes (FlappyGo's worlds have 100). */
export const MAX_PIPES = 10_000;

export interface EngineDeps {
  /** The table the RPCs work on; share it with the real-time loop. Created when omitted. */
  games?: GameTable;
  /** Clock for a table created here (ignored when `games` is given). */
  clock?: () => number;
  /** Capacity of a table created here (ignored when `games` is given). */
  maxGames?: number;
}

const PLAY_STATE: Record<Phase, PlayState> = {
  ready: PlayState.READY,
  playing: PlayState.PLAYING,
  over: PlayState.OVER,
};

export function playStateOf(phase: Phase): PlayState {
  return PLAY_STATE[phase];
}

/** The physics course of a world, or an InvalidArgument error. */
export function courseOf(world: World | undefined): Course {
  if (!world) throw new ConnectError("world is required", Code.InvalidArgument);
  if (!world.viewport) throw new ConnectError("world.viewport is required", Code.InvalidArgument);
  if (world.pipes.length === 0) throw new ConnectError("world has no pipes", Code.InvalidArgument);
  if (world.pipes.length > MAX_PIPES) {
    throw new ConnectError(`world has ${world.pipes.length} pipes, more than ${MAX_PIPES}`, Code.InvalidArgument);
  }
  return {
    pipeSpacing: world.pipeSpacing,
    viewport: { width: world.viewport.width, height: world.viewport.height },
    pipes: world.pipes,
  };
}

function requireGameId(id: string): void {
  const problem = checkGameId(id);
  if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
}

/**
 * The EngineService handler. StartGame creates a game in Ready owned by the caller; HandleInput
 * applies one key press. Ticks are not driven here: the real-time loop calls `games.tick(id)`.
 */
export function createEngine(deps: EngineDeps = {}): ServiceImpl<typeof EngineService> {
  const games =
    deps.games ??
    new GameTable({
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...(deps.maxGames !== undefined ? { maxGames: deps.maxGames } : {}),
    });
  return {
    startGame(request, ctx) {
      const principal = requirePrincipal(ctx);
      requireGameId(request.gameId);
      const game = games.create({
        id: request.gameId,
        owner: { username: principal.username, token: principal.token, expiresAt: principal.expiresAt },
        course: courseOf(request.world),
        ...(request.bird ? { bird: { width: request.bird.width, height: request.bird.height } } : {}),
        ...(request.world ? { seed: request.world.seed } : {}),
      });
      return create(StartGameResponseSchema, { gameId: game.id, pipesInView: game.state.pipesInView });
    },

    handleInput(request, ctx) {
      const principal = requirePrincipal(ctx);
      requireGameId(request.gameId);
      if (request.key !== Key.SPACE) {
        throw new ConnectError(`key must be KEY_SPACE, got ${request.key}`, Code.InvalidArgument);
      }
      const result = games.input(request.gameId, principal.username, {
        seq: request.seq,
        clientTimeMs: request.clientTimeMs,
      });
      return create(HandleInputResponseSchema, { tick: result.tick, state: playStateOf(result.phase) });
    },
  };
}
