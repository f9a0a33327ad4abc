import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import {
  GameOriginSchema,
  type GameSnapshot as SnapshotMessage,
  GameSnapshotSchema,
} from "@flaplab/contracts/engine/v1/snapshot_pb";
import { type Phase, createGame } from "@flaplab/physics";
import type { StoredGame } from "@flaplab/snapshots";
import type { Game, GameSnapshot } from "./game.js";

const PHASE_STATE: Record<Phase, PlayState> = { ready: PlayState.READY, playing: PlayState.PLAYING, over: PlayState.OVER };

/** A game's origin: its world, bird and player. */
export function originOf(game: Game) {
  const { course, bird } = game.state;
  return create(GameOriginSchema, {
    gameId: game.id,
    owner: game.owner.username,
    world: {
      seed: game.seed,
      pipeSpacing: course.pipeSpacing,
      viewport: { width: course.viewport.width, height: course.viewport.height },
      pipes: course.pipes.map((p) => ({ gapStart: p.gapStart, gapHeight: p.gapHeight })),
    },
    bird: { width: bird.width, height: bird.height },
    createdAtMs: game.createdAtMs,
    traceparent: game.traceparent ?? "",
  });
}

/** A game's state now, as the store keeps it. */
export function snapshotOf(game: Game, engine: string, nowMs: number): SnapshotMessage {
  return fillSnapshot(create(GameSnapshotSchema, { gameId: game.id, engine }), game, nowMs);
}

/** Writes game `game`'s state now into its snapshot message `message` (its game and engine unchanged). */
export function fillSnapshot(message: SnapshotMessage, game: Game, nowMs: number): SnapshotMessage {
  const s = game.state;
  message.phase = PHASE_STATE[s.phase];
  message.tick = s.tick;
  message.birdY = s.birdY;
  message.birdVelocity = s.birdVelocity;
  message.pipeSpeed = s.pipeSpeed;
  message.pipeWindowX = s.pipeWindowX;
  message.closestPipe = s.closestPipe;
  message.score = s.score;
  message.lastInputSeq = game.lastInputSeq;
  message.reflectedSeq = game.reflectedSeq;
  message.startedAtMs = game.startedAtMs ?? 0;
  message.writtenAtMs = nowMs;
  return message;
}

/** The game a stored snapshot describes, ready for `GameTable.adopt`. */
export function gameOf(stored: StoredGame, nowMs: number): GameSnapshot {
  const { origin, snapshot } = stored;
  const world = origin.world;
  if (!world?.viewport || !origin.bird) throw new ConnectError(`stored game ${origin.gameId} has no world`, Code.DataLoss);
  const state = createGame(
    { pipeSpacing: world.pipeSpacing, viewport: { width: world.viewport.width, height: world.viewport.height }, pipes: world.pipes },
    { width: origin.bird.width, height: origin.bird.height },
  );
  // Field by field into createGame's object: one shape for every game (see physics' copyGame).
  state.phase = snapshot.phase === PlayState.PLAYING ? "playing" : "ready";
  state.tick = snapshot.tick;
  state.birdY = snapshot.birdY;
  state.birdVelocity = snapshot.birdVelocity;
  state.pipeSpeed = snapshot.pipeSpeed;
  state.pipeWindowX = snapshot.pipeWindowX;
  state.closestPipe = snapshot.closestPipe;
  state.score = snapshot.score;
  return {
    id: origin.gameId,
    // The token is not stored: calls made for the player carry this engine's component credential.
    owner: { username: origin.owner, token: "" },
    seed: world.seed,
    state,
    createdAtMs: origin.createdAtMs,
    startedAtMs: snapshot.startedAtMs > 0 ? snapshot.startedAtMs : undefined,
    finishedAtMs: undefined,
    lastActivityMs: nowMs,
    lastInputSeq: snapshot.lastInputSeq,
    reflectedSeq: snapshot.reflectedSeq,
    inputs: [],
    traceparent: origin.traceparent === "" ? undefined : origin.traceparent,
  };
}
