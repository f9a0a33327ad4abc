import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { currentCall, defineComponent, requirePrincipal } from "@flaplab/component";
import {
  EngineService,
  HandleInputResponseSchema,
  Key,
  PlayState,
  ResumeGameResponseSchema,
  StartGameResponseSchema,
} from "@flaplab/contracts/engine/v1/engine_pb";
import type { World } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import type { Course, Phase } from "@flaplab/physics";
import { WORLD_LIMITS } from "@flaplab/worldgen";
import { GameTable, birdOrDefault, checkGameId, type GameTableOptions } from "./games.js";
import type { SnapshotKeeper } from "./snapshot-keeper.js";

/** StartGame and HandleInput are internal: worlds come only from the world generator, through the initiator. */
export const engineComponent = defineComponent({
  name: "engine",
  service: EngineService,
  internalMethods: ["StartGame", "HandleInput", "ResumeGame"],
  // The initiator places games. HandleInput (the RPC form of a key press) has no caller in the call graph: any component may.
  callers: { StartGame: ["initiator"], ResumeGame: ["initiator"] },
  calls: ["music", "score"],
});

/** Largest world accepted, in pipes: what the world generator makes (100, as FlappyGo's worlds). */
export const MAX_PIPES = WORLD_LIMITS.maxPipes;

export interface EngineDeps {
  /** The table the RPCs work on; share it with the real-time loop. Created when omitted. */
  games?: GameTable;
  /** Clock for a table created here (ignored when `games` is given). */
  clock?: () => number;
  /** Capacity of a table created here (ignored when `games` is given). */
  maxGames?: number;
  /** Other options of a table created here (ignored when `games` is given). */
  table?: GameTableOptions;
  /** Continues games from the snapshot store (ResumeGame); without it ResumeGame is FailedPrecondition. */
  snapshots?: SnapshotKeeper;
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
    throw new ConnectError(
      `world has ${world.pipes.length} pipes, more than ${MAX_PIPES} (what the world generator makes)`,
      Code.InvalidArgument,
    );
  }
  return {
    pipeSpacing: world.pipeSpacing,
    viewport: { width: world.viewport.width, height: world.viewport.height },
    pipes: world.pipes,
  };
}

/**
 * Why a world is not one the world generator could have made, or undefined. StartGame accepts only
 * such worlds (`WORLD_LIMITS` of `@flaplab/worldgen`): at most 100 pipes, a viewport the generator
 * accepts, a pipe spacing from 0 to half the viewport width, every gap finite and inside the
 * viewport, and a bird smaller than the viewport. This also bounds a game's memory.
 */
export function checkWorld(world: World | undefined, bird?: { width: number; height: number }): string | undefined {
  if (!world) return "world is required";
  const viewport = world.viewport;
  if (!viewport) return "world.viewport is required";
  const { minViewportWidth, minViewportHeight, maxViewportSize, maxPipes, maxSpacingPerWidth } = WORLD_LIMITS;
  const { width, height } = viewport;
  if (!Number.isInteger(width) || width < minViewportWidth || width > maxViewportSize) {
    return `viewport width must be a whole number from ${minViewportWidth} to ${maxViewportSize} px, got ${width}`;
  }
  if (!Number.isInteger(height) || height < minViewportHeight || height > maxViewportSize) {
    return `viewport height must be a whole number from ${minViewportHeight} to ${maxViewportSize} px, got ${height}`;
  }
  if (world.pipes.length === 0) return "world has no pipes";
  if (world.pipes.length > maxPipes) {
    return `world has ${world.pipes.length} pipes, more than ${maxPipes} (what the world generator makes)`;
  }
  const maxSpacing = width * maxSpacingPerWidth;
  if (!Number.isFinite(world.pipeSpacing) || world.pipeSpacing < 0 || world.pipeSpacing > maxSpacing) {
    return `pipe spacing must be from 0 to ${maxSpacing} px (half the viewport width), got ${world.pipeSpacing}`;
  }
  for (let i = 0; i < world.pipes.length; i++) {
    const { gapStart, gapHeight } = world.pipes[i]!;
    if (
      !Number.isFinite(gapStart) || !Number.isFinite(gapHeight) ||
      gapStart < 0 || gapHeight <= 0 || gapStart + gapHeight > height
    ) {
      return `pipe ${i} has a gap outside the ${height} px viewport (start ${gapStart}, height ${gapHeight}): a gap must start at 0 or more and end inside the viewport`;
    }
  }
  if (bird && (bird.width >= width || bird.height >= height)) {
    return `bird ${bird.width}x${bird.height} must be smaller than the ${width}x${height} viewport`;
  }
  return undefined;
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
      ...deps.table,
      ...(deps.maxGames !== undefined ? { maxGames: deps.maxGames } : {}),
    });
  return {
    startGame(request, ctx) {
      const principal = requirePrincipal(ctx);
      requireGameId(request.gameId);
      // The initiator places the game on another engine.
      if (deps.snapshots?.draining) throw new ConnectError("this engine is draining", Code.Unavailable);
      const bird = request.bird ? birdOrDefault({ width: request.bird.width, height: request.bird.height }) : undefined;
      const problem = checkWorld(request.world, bird);
      if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
      const game = games.create({
        id: request.gameId,
        owner: { username: principal.username, token: principal.token, expiresAt: principal.expiresAt },
        course: courseOf(request.world),
        ...(request.bird ? { bird: { width: request.bird.width, height: request.bird.height } } : {}),
        ...(request.world ? { seed: request.world.seed } : {}),
        // The game's calls join this call's trace (tracing on); undefined otherwise.
        traceparent: currentCall()?.traceparent,
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

    async resumeGame(request, ctx) {
      const principal = requirePrincipal(ctx);
      requireGameId(request.gameId);
      if (!deps.snapshots) {
        throw new ConnectError("this engine keeps no snapshots: its games cannot be resumed", Code.FailedPrecondition);
      }
      if (deps.snapshots.draining) throw new ConnectError("this engine is draining", Code.Unavailable);
      // Only the initiator calls ResumeGame, and it has tried the game's live holder first.
      const game = await deps.snapshots.resume(request.gameId, principal.username, { holderTried: true });
      return create(ResumeGameResponseSchema, { gameId: game.id, tick: game.state.tick, pipesInView: game.state.pipesInView, seed: game.seed });
    },
  };
}
