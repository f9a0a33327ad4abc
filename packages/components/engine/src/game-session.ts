import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MusicService } from "@flaplab/contracts/music/v1/music_pb";
import type { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { CloseCode, FrameWriter, type SessionHandler, type StreamSession, checkStreamOwnership } from "@flaplab/game-protocol";
import type { Game } from "./game.js";
import type { GameTable } from "./games.js";
import { type EngineLogger, GameStream, type StreamConfig } from "./game-stream.js";
import { type DrainResult, type MoveTarget, drainStreams } from "./hand-over.js";
import type { RunOutbox } from "./pending-runs.js";
import { RunRecorder } from "./run-recorder.js";
import type { TickScheduler } from "./scheduler.js";
import type { SnapshotKeeper } from "./snapshot-keeper.js";

export type { EngineLogger } from "./game-stream.js";
export type { DrainResult, MoveTarget } from "./hand-over.js";
export { DEFAULT_RECORD_RETRY_DELAYS_MS, DEFAULT_RECORD_TIMEOUT_MS } from "./run-recorder.js";
export { LATENESS_RANGE_US, LATENESS_SAMPLE_EVERY } from "./stream-stats.js";

export interface GameSessionDeps {
  /** The table StartGame fills. */
  readonly games: GameTable;
  /** Ticks every game of this process. */
  readonly scheduler: TickScheduler;
  readonly music: Client<typeof MusicService>;
  readonly score: Client<typeof ScoreService>;
  readonly logger?: EngineLogger;
  /** A session with more unsent bytes than this at a tick is closed 4429 (default 16 KiB). */
  readonly maxBufferedBytes?: number;
  /** Largest ClientInput accepted, bytes (default 256); larger is closed 4413. */
  readonly maxInputBytes?: number;
  /**
   * Inputs a session may send in a burst (default 30). Each tick gives one back, so a client may
   * send 30 per second for as long as it likes, far beyond any player; more is closed 4420.
   */
  readonly maxInputBurst?: number;
  /** Pauses before each retry of RecordRun when it is Unavailable (default 100, 400, 1600 ms). */
  readonly recordRetryDelaysMs?: readonly number[];
  /** Deadline of one RecordRun attempt, ms (default 5000). */
  readonly recordTimeoutMs?: number;
  /** How to wait between retries (default setTimeout). */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Keeps every live game's snapshot in the store, and continues a game this engine does not hold
   * from its snapshot when its stream opens here (it moved, or its engine died).
   */
  readonly snapshots?: SnapshotKeeper;
  /**
   * Where a run goes that the score component could not record (down, or not answering): it is
   * recorded from there when the score component is back, and the summary says `record_pending`.
   */
  readonly outbox?: RunOutbox;
}

export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024;
export const DEFAULT_MAX_INPUT_BYTES = 256;
export const DEFAULT_MAX_INPUT_BURST = 30;

const silent: EngineLogger = { info() {}, warn() {}, error() {} };
/** How a stream is closed when the game it opened cannot be continued here. */
const RESUME_CLOSE_CODES: ReadonlyMap<Code, CloseCode> = new Map([
  [Code.NotFound, CloseCode.NotFound],
  [Code.PermissionDenied, CloseCode.PermissionDenied],
  [Code.FailedPrecondition, CloseCode.GameOver],
  [Code.ResourceExhausted, CloseCode.LimitReached],
]);

/** The engine's session handler, which also says which games have a stream here now. */
export interface GameSessionHandler extends SessionHandler {
  /** Game `gameId` has a live stream session on this handler. */
  hasStream(gameId: string): boolean;
  /**
   * Hands every game with a stream here over to another engine, each right after its next tick:
   * stops its ticks, waits for its snapshot to be stored (the games of one round share a batch),
   * tells its client where it moved (`Moved`, then close 4301) and removes it here. `moveTo` says
   * where each game goes (undefined: nowhere, and the stream closes 4500). Needs `snapshots`.
   */
  drain(moveTo: (gameId: string) => Promise<MoveTarget | undefined>): Promise<DrainResult>;
}

/**
 * The engine's game stream handler. A session for game G by user U: no stream ticket → 4401, a
 * ticket of another game or G owned by someone else → 4403 (`checkStreamOwnership`), unknown G → 4404, G already has a stream → 4409, G over → 4410. Then the first
 * ClientInput starts the game (tick 1 one period later) and each later one flaps at once, answered
 * by an input-ack frame before anything else; every tick sends a frame. At game over: the
 * game-over frame, RecordRun, the GameSummary, then close 0 "game over". A session that ends before that abandons the game: it is removed
 * from the loop and the table, and not recorded.
 */
export function createGameSessionHandler(deps: GameSessionDeps): GameSessionHandler {
  const logger = deps.logger ?? silent;
  const config: StreamConfig = {
    games: deps.games,
    scheduler: deps.scheduler,
    music: deps.music,
    logger,
    maxBufferedBytes: deps.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    maxInputBytes: deps.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
    maxInputBurst: deps.maxInputBurst ?? DEFAULT_MAX_INPUT_BURST,
    recorder: new RunRecorder({
      score: deps.score,
      logger,
      retryDelaysMs: deps.recordRetryDelaysMs,
      timeoutMs: deps.recordTimeoutMs,
      sleep: deps.sleep,
      outbox: deps.outbox,
    }),
    writer: new FrameWriter(),
    snapshots: deps.snapshots,
    snapshotsEveryRound: deps.snapshots?.writes === "every-round",
  };
  const live = new Map<string, GameStream>();

  const play = (session: StreamSession, game: Game): void => {
    const id = game.id;
    if (live.has(id)) {
      session.close(CloseCode.AlreadyConnected, "game already has a stream");
      return;
    }
    if (game.state.phase === "over") {
      session.close(CloseCode.GameOver, `game ${id} is over`);
      return;
    }
    const stream = new GameStream(config, session, game);
    live.set(id, stream);
    void session.closed.then(() => {
      if (live.get(id) === stream) live.delete(id);
    });
    stream.start();
  };

  /** A game this engine does not hold: continue it from its snapshot, if the store has one. */
  const resume = async (session: StreamSession): Promise<void> => {
    const id = session.gameId;
    let ended = false;
    void session.closed.then(() => {
      ended = true;
    });
    let game: Game;
    try {
      game = await config.snapshots!.resume(id, session.principal.username);
    } catch (err) {
      const e = ConnectError.from(err);
      const code = RESUME_CLOSE_CODES.get(e.code) ?? CloseCode.Internal;
      return session.close(code, e.code === Code.NotFound ? `unknown game ${id}` : e.rawMessage);
    }
    if (ended) return;
    play(session, game);
  };

  // Another engine took a game over (it resumed it while this one still played it): stop here.
  if (config.snapshots) {
    config.snapshots.onLost = (gameId) => {
      const stream = live.get(gameId);
      if (stream) stream.lose();
      else if (config.games.has(gameId)) config.games.delete(gameId);
    };
  }

  const handler: SessionHandler = (session) => {
    const id = session.gameId;
    const game = config.games.get(id);
    const refusal = checkStreamOwnership(session, game?.owner.username);
    if (refusal) return session.close(refusal.code, refusal.reason);
    if (!game && config.games.isDetached(id)) return session.close(CloseCode.AlreadyConnected, "game already has a stream");
    if (!game && config.snapshots) return void resume(session);
    if (!game) return session.close(CloseCode.NotFound, `unknown game ${id}`);
    play(session, game);
  };

  const drain = (moveTo: (gameId: string) => Promise<MoveTarget | undefined>): Promise<DrainResult> => {
    if (!config.snapshots) return Promise.reject(new Error("an engine without a snapshot store cannot drain its games"));
    return drainStreams([...live.values()], moveTo, config.logger);
  };

  return Object.assign(handler, { hasStream: (gameId: string) => live.has(gameId), drain });
}
