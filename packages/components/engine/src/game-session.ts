import { create } from "@bufbuild/protobuf";
import { type CallOptions, type Client, Code, ConnectError } from "@connectrpc/connect";
import { type CallContext, type Principal, runInCall } from "@flaplab/component";
import {
  GameStreamMessageSchema,
  GameSummarySchema,
} from "@flaplab/contracts/engine/v1/stream_pb";
import { type MusicService, Sound } from "@flaplab/contracts/music/v1/music_pb";
import type { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import {
  CloseCode,
  ClientInputReader,
  FrameEncoder,
  FrameWriter,
  type SessionHandler,
  StreamProtocolError,
  type StreamSession,
  checkStreamOwnership,
  encodeDelimited,
} from "@flaplab/game-protocol";
import { PIPE_WIDTH } from "@flaplab/physics";
import { buildIntegerHistogram } from "@flaplab/report-kit/histogram";
import type { Histogram } from "hdr-histogram-js";
import type { Game, GameTable } from "./games.js";
import type { ScheduledTask, TickInfo, TickScheduler, TickTarget } from "./scheduler.js";
import { PERMANENT_RECORD_CODES, type RunOutbox } from "./pending-runs.js";
import type { KeptGameRef, SnapshotKeeper } from "./snapshot-keeper.js";

/** The logging the game streams need; a pino logger fits. */
export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

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

/** Where a drained game goes: the new engine's stream URLs and a ticket that opens them. */
export interface MoveTarget {
  readonly engineUrl: string;
  readonly engineWsUrl: string;
  readonly streamTicket: string;
}

/** What a drain did. */
export interface DrainResult {
  /** Games handed over (told where they moved). */
  readonly moved: number;
  /** Games that had nowhere to go: their streams closed 4500, the snapshot kept for ResumeGame. */
  readonly stranded: number;
}

export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024;
export const DEFAULT_MAX_INPUT_BYTES = 256;
export const DEFAULT_MAX_INPUT_BURST = 30;
export const DEFAULT_RECORD_RETRY_DELAYS_MS: readonly number[] = [100, 400, 1600];
export const DEFAULT_RECORD_TIMEOUT_MS = 5000;

const silent: EngineLogger = { info() {}, warn() {}, error() {} };
/** The summary's p50 tick lateness is taken over the first tick and every 8th after it. */
export const LATENESS_SAMPLE_EVERY = 8;
/** A draining game that has not ticked within this long moves without waiting for its tick. */
const DRAIN_TICK_WAIT_MS = 100;
/** How a stream is closed when the game it opened cannot be continued here. */
const RESUME_CLOSE_CODES: ReadonlyMap<Code, CloseCode> = new Map([
  [Code.NotFound, CloseCode.NotFound],
  [Code.PermissionDenied, CloseCode.PermissionDenied],
  [Code.FailedPrecondition, CloseCode.GameOver],
  [Code.ResourceExhausted, CloseCode.LimitReached],
]);
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The engine's game stream handler. A session for game G by user U: no stream ticket → 4401, a
 * ticket of another game or G owned by someone else → 4403 (`checkStreamOwnership`), unknown G → 4404, G already has a stream → 4409, G over → 4410. Then the first
 * ClientInput starts the game (tick 1 one period later) and each later one flaps at once, answered
 * by an input-ack frame before anything else; every tick sends a frame. At game over: the
 * game-over frame, RecordRun, the GameSummary, then close 0 "game over". A session that ends before that abandons the game: it is removed
 * from the loop and the table, and not recorded.
 */
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

export function createGameSessionHandler(deps: GameSessionDeps): GameSessionHandler {
  const config: StreamConfig = {
    games: deps.games,
    scheduler: deps.scheduler,
    music: deps.music,
    score: deps.score,
    logger: deps.logger ?? silent,
    maxBufferedBytes: deps.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    maxInputBytes: deps.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
    maxInputBurst: deps.maxInputBurst ?? DEFAULT_MAX_INPUT_BURST,
    retryDelaysMs: deps.recordRetryDelaysMs ?? DEFAULT_RECORD_RETRY_DELAYS_MS,
    recordTimeoutMs: deps.recordTimeoutMs ?? DEFAULT_RECORD_TIMEOUT_MS,
    sleep: deps.sleep ?? realSleep,
    writer: new FrameWriter(),
    snapshots: deps.snapshots,
    snapshotsEveryRound: deps.snapshots?.writes === "every-round",
    outbox: deps.outbox,
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

  const drain = async (moveTo: (gameId: string) => Promise<MoveTarget | undefined>): Promise<DrainResult> => {
    const keeper = config.snapshots;
    if (!keeper) throw new Error("an engine without a snapshot store cannot drain its games");
    // Where each game goes is settled while it still plays: its pause starts only at the freeze.
    const targets = new Map<GameStream, MoveTarget | undefined>();
    await Promise.all(
      [...live.values()].map(async (stream) => {
        try {
          targets.set(stream, await moveTo(stream.game.id));
        } catch (err) {
          targets.set(stream, undefined);
          config.logger.warn({ gameId: stream.game.id, err: messageOf(err) }, "no engine to move the game to");
        }
      }),
    );
    // Each game moves right after its next tick (its frame out, its snapshot stored): the player
    // waits for the move alone, not for the rest of a tick period as well.
    const outcomes = await Promise.all([...targets].map(([stream, target]) => stream.moveAfterTick(target)));
    const moved = outcomes.filter((o) => o === "moved").length;
    const stranded = outcomes.filter((o) => o === "stranded").length;
    return { moved, stranded };
  };

  return Object.assign(handler, { hasStream: (gameId: string) => live.has(gameId), drain });
}

interface StreamConfig {
  readonly games: GameTable;
  readonly scheduler: TickScheduler;
  readonly music: Client<typeof MusicService>;
  readonly score: Client<typeof ScoreService>;
  readonly logger: EngineLogger;
  readonly maxBufferedBytes: number;
  readonly maxInputBytes: number;
  readonly maxInputBurst: number;
  readonly retryDelaysMs: readonly number[];
  readonly recordTimeoutMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Every frame and ack of this handler's games is written here, then copied for the transport. */
  readonly writer: FrameWriter;
  readonly snapshots: SnapshotKeeper | undefined;
  /** The keeper writes a game's snapshot after every round it changed in. */
  readonly snapshotsEveryRound: boolean;
  readonly outbox: RunOutbox | undefined;
}

/** The most tick lateness a game's histogram tells apart, µs (1 s); later ticks count as this. */
export const LATENESS_RANGE_US = 1_000_000;

/**
 * A game's sampled tick lateness, µs: an HdrHistogram of 2 significant digits in 32-bit counts,
 * 1 µs to `LATENESS_RANGE_US` (7 KiB of counts, off the JS heap), sized at creation. Recording
 * allocates nothing: an auto-resizing histogram allocated a larger counts array the first time
 * a game's tick ran later than ever before, and when a stall made every game late at once, that
 * was thousands of arrays alive in the next young-generation collection (its pause grew with
 * them: 2–3.7 ms against ≈ 1 ms at 2,000 games).
 */
function latenessHistogram(): Histogram {
  return buildIntegerHistogram({
    bitBucketSize: 32,
    numberOfSignificantValueDigits: 2,
    lowestDiscernibleValue: 1,
    highestTrackableValue: LATENESS_RANGE_US,
    autoResize: false,
  });
}

/** One game played over one stream session. */
class GameStream implements TickTarget {
  private readonly encoder: FrameEncoder;
  private readonly principal: Principal;
  private task: ScheduledTask | undefined;
  /** The game's record in the snapshot keeper, once it has one. */
  private kept: KeptGameRef | undefined;
  private lastSeq: number;
  /** Inputs up to this seq were applied before this stream opened (re-sent after a move): dropped. */
  private readonly appliedSeq: number;
  /** Handed over (drained): no more ticks or inputs here, and not abandoned when the stream ends. */
  private frozen = false;
  private moved = false;
  /** Draining: where the game goes right after its next tick, and who waits for the outcome. */
  private drain: { target: MoveTarget | undefined; done: (outcome: "moved" | "stranded" | "ended") => void } | undefined;
  /**
   * Continued from a snapshot, and the client's first message (its re-sent presses) has not come
   * yet: the first tick waits for it, at most one period.
   */
  private awaitingResend = false;
  /** Inputs this session may still send before the next tick gives one back. */
  private inputCredit: number;
  /** The game-over tick has run. */
  private over = false;
  /** The session is closed (by either side). */
  private closed = false;
  /** Tick frames only (FlappyGo's frames); acks are counted apart. */
  private framesSent = 0;
  private frameBytes = 0;
  private framesUnder1kb = 0;
  private acksSent = 0;
  private ackBytes = 0;
  private ticksSkipped = 0;
  /**
   * Lateness of the first tick and every `LATENESS_SAMPLE_EVERY`th after it, µs (the summary's
   * p50). A record touches the histogram's object, its counts and their backing store, each a
   * cache miss when the game's tick comes round again: ≈ 0.4 µs per frame of 3.4–3.8 µs
   * measured at 2,000 games. The maximum is kept over every tick.
   */
  private readonly lateness: Histogram = latenessHistogram();
  private latenessMaxUs = 0;

  constructor(
    private readonly config: StreamConfig,
    private readonly session: StreamSession,
    readonly game: Game,
  ) {
    const state = game.state;
    this.encoder = new FrameEncoder({
      pipeSpacing: state.course.pipeSpacing,
      pipes: state.course.pipes,
      pipeWidth: PIPE_WIDTH,
      pipesInView: state.pipesInView,
    });
    this.principal = {
      username: game.owner.username,
      token: game.owner.token,
      expiresAt: game.owner.expiresAt ?? session.principal.expiresAt,
    };
    this.lastSeq = game.lastInputSeq;
    this.appliedSeq = game.lastInputSeq;
    this.inputCredit = config.maxInputBurst;
    const call = (verb: "Tick" | "HandleInput"): CallContext => ({
      component: "engine",
      verb,
      principal: this.principal,
      gameId: game.id,
      traceparent: game.traceparent,
    });
    this.calls = { Tick: call("Tick"), HandleInput: call("HandleInput") };
  }

  start(): void {
    void this.session.closed.then((end) => this.onClosed(end.code, end.reason, end.by));
    if (this.config.snapshots && !this.config.snapshotsEveryRound) this.kept = this.config.snapshots.track(this.game, this.kept);
    // Continued from a snapshot (moved, or resumed): the client resets from a full frame of the
    // tick the game stands at, sent at once. Its first message re-sends its latest press and every
    // press no frame reflected; the next tick runs as soon as they are read (one period at most).
    const continued = this.game.state.tick > 0;
    if (continued) {
      this.encoder.writeFrame(this.game.state, this.game.reflectedSeq, this.config.writer);
      this.sendWritten("frame");
    }
    // Started before the stream came (by HandleInput), or continued: tick from now.
    if (this.game.state.phase === "playing") {
      this.startTicking();
      this.awaitingResend = continued;
    }
    this.read();
  }

  private get gameId(): string {
    return this.game.id;
  }

  /** The context of the calls this game makes, one per verb, made once. */
  private readonly calls: Readonly<Record<"Tick" | "HandleInput", CallContext>>;

  private call(verb: "Tick" | "HandleInput"): CallContext {
    return this.calls[verb];
  }

  private close(code: number, reason: string): void {
    this.closed = true;
    this.session.close(code, reason);
  }

  /**
   * Reads the client's bytes as they come, pushed by the session: a game waiting for its player's
   * next press (often a second or more) holds no pending promise, chunk or decoded input, which
   * thousands of games' worth would carry past every young-generation collection.
   */
  private read(): void {
    // Inputs are read as (seq, time), with no message object per press (ClientInputReader).
    const reader = new ClientInputReader(this.config.maxInputBytes);
    const onInput = (seq: number, clientTimeMs: number): boolean => {
      this.onInput(seq, clientTimeMs);
      return !this.closed;
    };
    this.session.read({
      onChunk: (chunk) => {
        if (!this.closed) this.onChunk(reader, chunk, onInput);
      },
      onEnd: (err) => {
        if (err === undefined || this.closed) return;
        this.config.logger.error({ gameId: this.gameId, err }, "game stream read failed");
        this.close(CloseCode.Internal, `reading the game stream failed: ${messageOf(err)}`);
      },
    });
  }

  private onChunk(reader: ClientInputReader, chunk: Uint8Array, onInput: (seq: number, clientTimeMs: number) => boolean): void {
    try {
      reader.push(chunk, onInput);
    } catch (err) {
      if (!(err instanceof StreamProtocolError)) throw err;
      this.close(err.kind === "too-large" ? CloseCode.TooLarge : CloseCode.Malformed, err.message);
      return;
    }
    if (this.awaitingResend && !this.closed && !this.frozen) {
      // The re-sent presses are in: the game goes on now, on a clock that starts here.
      this.awaitingResend = false;
      this.task?.cancel();
      const scheduler = this.config.scheduler;
      this.task = scheduler.schedule(this, scheduler.now() - scheduler.periodMs);
    }
  }

  private onInput(seq: number, clientTimeMs: number): void {
    // A client re-sends what no frame reflected after a move; what was applied is not applied twice.
    if (seq <= this.appliedSeq && seq > 0) return;
    if (this.frozen) return;
    if (--this.inputCredit < 0) {
      this.close(CloseCode.TooManyInputs, `too many inputs: more than ${this.config.maxInputBurst} at once or one per tick`);
      return;
    }
    // A press that crossed the game-over frame on its way (the client had not seen it yet) is
    // dropped: the game is over, and its summary follows once the run is recorded. No tick
    // refills the credit now, so a client that keeps sending is still closed above.
    if (this.over || this.game.state.phase === "over") return;
    if (seq <= this.lastSeq) {
      this.close(CloseCode.Malformed, `input seq ${seq} is not after ${this.lastSeq}: seq must strictly increase`);
      return;
    }
    this.lastSeq = seq;
    if (this.config.games.get(this.gameId) !== this.game) {
      this.close(CloseCode.Internal, `game ${this.gameId} is no longer in the engine`);
      return;
    }
    const result = this.config.games.input(this.gameId, this.game.owner.username, { seq, clientTimeMs });
    this.kept = this.config.snapshots?.changed(this.game, this.kept);
    if (result.effect === "started") {
      this.startTicking();
    } else if (result.effect === "flap") {
      // The flap is in the state now: tell the client first, then start its sound.
      if (this.encoder.writeAck(this.game.state, seq, this.config.writer) > 0) this.sendWritten("ack");
      this.playMusic("HandleInput", Sound.FLAP, seq, result.tick);
    }
  }

  private startTicking(): void {
    if (this.task) return;
    this.task = this.config.scheduler.schedule(this);
  }

  /** One scheduled tick (the scheduler calls it: the stream is its own `TickTarget`); false stops the schedule. */
  onTick(info: TickInfo): boolean {
    if (this.closed) return false;
    try {
      if (this.session.bufferedBytes > this.config.maxBufferedBytes) {
        this.close(CloseCode.TooSlow, "client too slow");
        return false;
      }
      this.inputCredit = Math.min(this.config.maxInputBurst, this.inputCredit + 1 + info.skipped);
      const events = this.config.games.tickGame(this.game);
      if (!events) {
        this.close(CloseCode.Internal, `game ${this.gameId} is no longer in the engine`);
        return false;
      }
      if (!events.ticked) return false;
      // Writing "on-leave", the keeper has nothing to do at a tick (the game has its record).
      if (this.config.snapshotsEveryRound) this.kept = this.config.snapshots?.changed(this.game, this.kept);
      const latenessUs = info.latenessMs > 0 ? Math.round(info.latenessMs * 1000) : 0;
      if (latenessUs > this.latenessMaxUs) this.latenessMaxUs = latenessUs;
      if (this.framesSent % LATENESS_SAMPLE_EVERY === 0) this.lateness.recordValue(Math.min(latenessUs, LATENESS_RANGE_US));
      this.ticksSkipped += info.skipped;
      const state = this.game.state;
      this.encoder.writeFrame(state, this.game.reflectedSeq, this.config.writer);
      this.sendWritten("frame");
      if (events.scored) this.playMusic("Tick", Sound.POINT, 0, state.tick);
      if (state.phase === "over") {
        this.over = true;
        this.playMusic("Tick", Sound.DIE, 0, state.tick);
        void this.finish();
        this.drain?.done("ended");
        this.drain = undefined;
        return false;
      }
      const drain = this.drain;
      if (drain !== undefined) {
        // Its frame is out: the game moves now, before its next tick would be due.
        this.drain = undefined;
        this.task = undefined;
        void this.handOver(drain.target).then(drain.done);
        return false;
      }
      return true;
    } catch (err) {
      this.config.logger.error({ gameId: this.gameId, err }, "game tick failed");
      this.close(CloseCode.Internal, `engine tick failed: ${messageOf(err)}`);
      return false;
    }
  }

  /**
   * Sends the message just written to the shared writer. `sendFrom` copies what the transport
   * keeps before it returns, so the writer is free for the next game at once and the engine
   * allocates nothing for a frame.
   */
  private sendWritten(what: "frame" | "ack"): void {
    const { buffer, start, end } = this.config.writer;
    this.count(what, this.session.sendFrom(buffer, start, end) ? end - start : -1);
  }

  /** Counts a tick frame or an ack of `bytes` that the session took (-1: it did not). */
  private count(what: "frame" | "ack" | "summary", bytes: number): void {
    if (bytes < 0) return;
    if (what === "frame") {
      this.framesSent++;
      this.frameBytes += bytes;
      if (bytes < 1024) this.framesUnder1kb++;
    } else if (what === "ack") {
      this.acksSent++;
      this.ackBytes += bytes;
    }
  }

  /** Fire-and-forget: a failure is logged, never waited for. */
  private playMusic(verb: "Tick" | "HandleInput", sound: Sound, inputSeq: number, tick: number): void {
    const request = { gameId: this.gameId, sound, inputSeq, tick };
    let pending: Promise<unknown>;
    try {
      pending = runInCall(this.call(verb), () => this.config.music.playMusic(request));
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.catch((err: unknown) => {
      this.config.logger.warn({ gameId: this.gameId, sound: Sound[sound], tick, err: messageOf(err) }, "PlayMusic failed");
    });
  }

  /** After the game-over frame: record the run, send the summary, close. */
  private async finish(): Promise<void> {
    const state = this.game.state;
    const { recorded, error, pending } = await this.recordRun();
    const lateness = this.lateness;
    const summary = encodeDelimited(
      GameStreamMessageSchema,
      create(GameStreamMessageSchema, {
        kind: {
          case: "summary",
          value: create(GameSummarySchema, {
              score: state.score,
              ticks: state.tick,
              recorded,
              recordError: error,
              recordPending: pending,
              framesSent: this.framesSent,
              frameBytes: BigInt(this.frameBytes),
              framesUnder1kb: this.framesUnder1kb,
              tickLatenessP50Us: lateness.totalCount > 0 ? lateness.getValueAtPercentile(50) : 0,
              tickLatenessMaxUs: this.latenessMaxUs,
              ticksSkipped: this.ticksSkipped,
              acksSent: this.acksSent,
              ackBytes: BigInt(this.ackBytes),
          }),
        },
      }),
    );
    this.count("summary", this.session.send(summary) ? summary.length : -1);
    this.config.snapshots?.forget(this.gameId, true);
    this.config.logger.info(
      { gameId: this.gameId, score: state.score, ticks: state.tick, recorded, recordPending: pending, framesSent: this.framesSent, acksSent: this.acksSent },
      "game over",
    );
    this.close(CloseCode.Normal, "game over");
  }

  private async recordRun(): Promise<{ recorded: boolean; error: string; pending: boolean }> {
    const result = await this.tryRecordRun();
    if (result.recorded || !result.transient || !this.config.outbox) return { recorded: result.recorded, error: result.error, pending: false };
    const state = this.game.state;
    try {
      this.config.outbox.add({
        gameId: this.gameId,
        score: state.score,
        ticks: state.tick,
        seed: this.game.seed.toString(),
        player: this.game.owner.username,
        traceparent: this.game.traceparent,
      });
    } catch (err) {
      this.config.logger.error({ gameId: this.gameId, err: messageOf(err) }, "run could not be kept in the outbox: lost");
      return { recorded: false, error: result.error, pending: false };
    }
    this.config.logger.warn({ event: "run-pending", gameId: this.gameId, err: result.error }, "score unreachable: run kept in the outbox");
    return { recorded: false, error: result.error, pending: true };
  }

  /** RecordRun with retries; `transient` when the score component may take it later. */
  private async tryRecordRun(): Promise<{ recorded: boolean; error: string; transient: boolean }> {
    const state = this.game.state;
    const request = { gameId: this.gameId, score: state.score, ticks: state.tick, seed: this.game.seed };
    const options: CallOptions = { timeoutMs: this.config.recordTimeoutMs };
    const delays = this.config.retryDelaysMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await runInCall(this.call("Tick"), () => this.config.score.recordRun(request, options));
        return { recorded: true, error: "", transient: false };
      } catch (err) {
        const e = ConnectError.from(err);
        // An earlier attempt that looked lost did store the run.
        if (e.code === Code.AlreadyExists && attempt > 0) return { recorded: true, error: "", transient: false };
        const delay = delays[attempt];
        if (e.code === Code.Unavailable && delay !== undefined) {
          this.config.logger.warn({ gameId: this.gameId, attempt: attempt + 1, err: e.message }, "RecordRun unavailable, retrying");
          await this.config.sleep(delay);
          continue;
        }
        this.config.logger.error({ gameId: this.gameId, attempts: attempt + 1, err: e.message }, "RecordRun failed");
        return { recorded: false, error: e.message, transient: !PERMANENT_RECORD_CODES.has(e.code) };
      }
    }
  }

  private onClosed(code: number, reason: string, by: string): void {
    this.closed = true;
    this.task?.cancel();
    if (this.over || this.moved) return;
    // Before game over: the game is abandoned here, not recorded. With a snapshot store its last
    // snapshot stays there: ResumeGame can continue it (a cut link, a crashed page).
    this.leaveHere();
    this.config.logger.info(
      { gameId: this.gameId, tick: this.game.state.tick, code, reason, by },
      "game abandoned: its stream ended before game over",
    );
  }

  /** Removes the game from this engine's table; its snapshot stays in the store (for a resume). */
  private leaveHere(): void {
    if (this.config.games.get(this.gameId) === this.game) this.config.games.delete(this.gameId);
    this.config.snapshots?.forget(this.gameId, false);
  }

  /**
   * Moves the game to `target` (or strands it, without one) right after its next tick; at once
   * when it is not ticking (not started) or does not tick within `DRAIN_TICK_WAIT_MS`. "ended"
   * when the game is over or its stream closed first.
   */
  moveAfterTick(target: MoveTarget | undefined): Promise<"moved" | "stranded" | "ended"> {
    return new Promise((done) => {
      if (this.task === undefined || this.closed || this.over) {
        void this.handOver(target).then(done);
        return;
      }
      const timer = setTimeout(() => {
        if (this.drain === undefined) return;
        this.drain = undefined;
        void this.handOver(target).then(done);
      }, DRAIN_TICK_WAIT_MS);
      this.drain = {
        target,
        done: (outcome) => {
          clearTimeout(timer);
          done(outcome);
        },
      };
    });
  }

  /** Freezes the game, waits for its snapshot to be stored, then moves or strands it. */
  private async handOver(target: MoveTarget | undefined): Promise<"moved" | "stranded" | "ended"> {
    if (!this.freeze()) return "ended";
    const keeper = this.config.snapshots!;
    this.kept = keeper.save(this.game, this.kept);
    await keeper.written(this.gameId);
    if (target && this.moveTo(target)) return "moved";
    this.strand();
    return "stranded";
  }

  /** Stops ticks and inputs for a hand-over; false when the game is over or its stream closed. */
  freeze(): boolean {
    if (this.closed || this.over || this.game.state.phase === "over") return false;
    this.frozen = true;
    this.task?.cancel();
    this.task = undefined;
    return true;
  }

  /** Tells the client where the game went, closes 4301 and removes the game here. */
  moveTo(target: MoveTarget): boolean {
    if (this.closed) return false;
    this.moved = true;
    const message = encodeDelimited(
      GameStreamMessageSchema,
      create(GameStreamMessageSchema, { kind: { case: "moved", value: { ...target, tick: this.game.state.tick } } }),
    );
    this.session.send(message);
    this.leaveHere();
    this.config.logger.info({ event: "game-moved", gameId: this.gameId, tick: this.game.state.tick, to: target.engineWsUrl }, "game handed over");
    this.close(CloseCode.Moved, "game moved to another engine");
    return true;
  }

  /** Another engine continues the game: stops it here and closes 4409, leaving the store alone. */
  lose(): void {
    this.frozen = true;
    this.moved = true;
    this.task?.cancel();
    this.task = undefined;
    this.leaveHere();
    this.close(CloseCode.AlreadyConnected, "the game continues on another engine");
  }

  /** Nowhere to go: closes 4500; the snapshot stays in the store for ResumeGame. */
  strand(): void {
    this.close(CloseCode.Internal, "engine shutting down; resume the game");
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
