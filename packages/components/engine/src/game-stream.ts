import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { type CallContext, type Principal, runInCall } from "@flaplab/component";
import { GameStreamMessageSchema, GameSummarySchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { type MusicService, Sound } from "@flaplab/contracts/music/v1/music_pb";
import {
  CloseCode,
  ClientInputReader,
  FrameEncoder,
  type FrameWriter,
  StreamProtocolError,
  type StreamSession,
  encodeDelimited,
} from "@flaplab/game-protocol";
import { PIPE_WIDTH } from "@flaplab/physics";
import type { Game } from "./game.js";
import type { GameTable } from "./games.js";
import { type MoveTarget, type Movable, type PendingMove, movedMessage } from "./hand-over.js";
import { messageOf } from "./message-of.js";
import type { RunRecorder } from "./run-recorder.js";
import type { ScheduledTask, TickInfo, TickScheduler, TickTarget } from "./scheduler.js";
import type { KeptGameRef, SnapshotKeeper } from "./snapshot-keeper.js";
import { type RefusedTransition, StreamPhaseMachine, closedPhaseOf, isClosedPhase } from "./stream-phase.js";
import { StreamStats } from "./stream-stats.js";

/** The logging the game streams need; a pino logger fits. */
export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What every game stream of one handler shares. */
export interface StreamConfig {
  readonly games: GameTable;
  readonly scheduler: TickScheduler;
  readonly music: Client<typeof MusicService>;
  readonly logger: EngineLogger;
  readonly maxBufferedBytes: number;
  readonly maxInputBytes: number;
  readonly maxInputBurst: number;
  readonly recorder: RunRecorder;
  /** Every frame and ack of this handler's games is written here, then copied for the transport. */
  readonly writer: FrameWriter;
  readonly snapshots: SnapshotKeeper | undefined;
  /** The keeper writes a game's snapshot after every round it changed in. */
  readonly snapshotsEveryRound: boolean;
}

/**
 * One game played over one stream session. Where it stands is one phase (`StreamPhase`, changed
 * only by `transition`); what it counts is its `StreamStats`; a drain moves it through
 * `hand-over.ts`, and a finished game's run is recorded by the handler's `RunRecorder`.
 */
export class GameStream extends StreamPhaseMachine implements TickTarget, Movable {
  private readonly encoder: FrameEncoder;
  private readonly principal: Principal;
  private readonly stats = new StreamStats();
  private task: ScheduledTask | undefined;
  /** The game's record in the snapshot keeper, once it has one. */
  private kept: KeptGameRef | undefined;
  private lastSeq: number;
  /** Inputs up to this seq were applied before this stream opened (re-sent after a move): dropped. */
  private readonly appliedSeq: number;
  /** Draining: the move due right after the next tick. */
  private pendingMove: PendingMove | undefined;
  /** Inputs this session may still send before the next tick gives one back. */
  private inputCredit: number;
  /** The context of the calls this game makes, one per verb, made once. */
  private readonly calls: Readonly<Record<"Tick" | "HandleInput", CallContext>>;

  constructor(
    private readonly config: StreamConfig,
    private readonly session: StreamSession,
    readonly game: Game,
  ) {
    super();
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
      if (continued) this.transition("awaiting-resend");
    }
    this.read();
  }

  private get gameId(): string {
    return this.game.id;
  }

  protected override refused({ from, to }: RefusedTransition): void {
    this.config.logger.error({ event: "stream-phase-refused", gameId: this.gameId, from, to }, "game stream phase change refused: an engine bug");
  }

  /** The session is closed (or closing): nothing more is read, ticked or sent. */
  private get closed(): boolean {
    return isClosedPhase(this.phase);
  }

  private close(code: number, reason: string): void {
    const phase = this.phase;
    if (!isClosedPhase(phase)) this.transition(closedPhaseOf(phase));
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
    const phase = this.phase;
    if (phase === "awaiting-resend") this.transition("live");
    else if (!(phase === "draining" && this.pendingMove?.tickOnResend)) return;
    else this.pendingMove.tickOnResend = false;
    // The re-sent presses are in: the game goes on now, on a clock that starts here.
    this.task?.cancel();
    const scheduler = this.config.scheduler;
    this.task = scheduler.schedule(this, scheduler.now() - scheduler.periodMs);
  }

  private onInput(seq: number, clientTimeMs: number): void {
    // A client re-sends what no frame reflected after a move; what was applied is not applied twice.
    if (seq <= this.appliedSeq && seq > 0) return;
    const phase = this.phase;
    if (phase === "handing-over" || phase === "moved") return;
    if (--this.inputCredit < 0) {
      this.close(CloseCode.TooManyInputs, `too many inputs: more than ${this.config.maxInputBurst} at once or one per tick`);
      return;
    }
    // A press that crossed the game-over frame on its way (the client had not seen it yet) is
    // dropped: the game is over, and its summary follows once the run is recorded. No tick
    // refills the credit now, so a client that keeps sending is still closed above.
    if (phase === "over" || this.game.state.phase === "over") return;
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
      this.stats.tick(info.latenessMs, info.skipped);
      const state = this.game.state;
      this.encoder.writeFrame(state, this.game.reflectedSeq, this.config.writer);
      this.sendWritten("frame");
      if (events.scored) this.playMusic("Tick", Sound.POINT, 0, state.tick);
      if (state.phase === "over") {
        this.transition("over");
        this.playMusic("Tick", Sound.DIE, 0, state.tick);
        void this.finish();
        this.pendingMove?.end();
        this.pendingMove = undefined;
        return false;
      }
      const move = this.pendingMove;
      if (move !== undefined) {
        // Its frame is out: the game moves now, before its next tick would be due.
        this.pendingMove = undefined;
        this.task = undefined;
        move.go();
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
    if (!this.session.sendFrom(buffer, start, end)) return;
    if (what === "frame") this.stats.frame(end - start);
    else this.stats.ack(end - start);
  }

  /** Fire-and-forget: a failure is logged, never waited for. */
  private playMusic(verb: "Tick" | "HandleInput", sound: Sound, inputSeq: number, tick: number): void {
    const request = { gameId: this.gameId, sound, inputSeq, tick };
    let pending: Promise<unknown>;
    try {
      pending = runInCall(this.calls[verb], () => this.config.music.playMusic(request));
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
    const { recorded, error, pending } = await this.config.recorder.record(this.game, this.calls.Tick);
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
            ...this.stats.summary(),
          }),
        },
      }),
    );
    this.session.send(summary);
    this.config.snapshots?.forget(this.gameId, true);
    this.config.logger.info(
      { gameId: this.gameId, score: state.score, ticks: state.tick, recorded, recordPending: pending, framesSent: this.stats.framesSent, acksSent: this.stats.acksSent },
      "game over",
    );
    this.close(CloseCode.Normal, "game over");
  }

  private onClosed(code: number, reason: string, by: string): void {
    const phase = this.phase;
    if (!isClosedPhase(phase)) this.transition(closedPhaseOf(phase));
    this.task?.cancel();
    if (this.phase !== "abandoned") return;
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

  // The hand-over (`Movable`): a drain moves the game right after its next tick.

  waitForTick(move: PendingMove): boolean {
    const phase = this.phase;
    if (this.task === undefined || isClosedPhase(phase) || phase === "over") return false;
    if (phase === "draining") {
      // Drained again before it moved: this move replaces the first, which ends.
      this.pendingMove?.end();
    } else {
      move.tickOnResend = phase === "awaiting-resend";
      this.transition("draining");
    }
    this.pendingMove = move;
    return true;
  }

  freeze(): boolean {
    const phase = this.phase;
    if (isClosedPhase(phase) || phase === "over" || phase === "handing-over" || this.game.state.phase === "over") return false;
    this.transition("handing-over");
    this.pendingMove = undefined;
    this.task?.cancel();
    this.task = undefined;
    return true;
  }

  stored(): Promise<void> {
    const keeper = this.config.snapshots!;
    this.kept = keeper.save(this.game, this.kept);
    return keeper.written(this.gameId);
  }

  moveTo(target: MoveTarget): boolean {
    if (this.closed) return false;
    this.transition("moved");
    this.session.send(movedMessage(target, this.game.state.tick));
    this.leaveHere();
    this.config.logger.info({ event: "game-moved", gameId: this.gameId, tick: this.game.state.tick, to: target.engineWsUrl }, "game handed over");
    this.close(CloseCode.Moved, "game moved to another engine");
    return true;
  }

  strand(): void {
    this.close(CloseCode.Internal, "engine shutting down; resume the game");
  }

  /** Another engine continues the game: stops it here and closes 4409, leaving the store alone. */
  lose(): void {
    if (!this.closed) this.transition("moved");
    this.pendingMove?.end();
    this.pendingMove = undefined;
    this.task?.cancel();
    this.task = undefined;
    this.leaveHere();
    this.close(CloseCode.AlreadyConnected, "the game continues on another engine");
  }
}
