// One game's stream to its engine: the start input and flaps with sequence numbers, frames and
// acks, the summary, and a game that continues elsewhere — it follows Moved to the new engine, and
// after a broken stream asks ResumeGame (with backoff) where to continue.
import { type GameStreamMessage, GameStreamMessageSchema, type GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import { type ClientView, CloseCode, DelimitedDecoder, FrameDecoder } from "@flaplab/game-protocol";
import type { Connector, SessionEnd, StreamConnection } from "./connection.js";
import { streamUrl } from "./connection.js";
import type { GameHooks, Reconnection } from "./hooks.js";
import { InputLog } from "./inputs.js";
import { backoffMs, type EngineHome, isFinalResumeError, sleep } from "./resume.js";

/** The link a game's streams take: WebTransport, or plain WebSocket (StartGame's `*_ws_url`s). */
export type StreamLink = "webtransport" | "websocket";

const SUMMARY_TIMEOUT_MS = 10_000;
const RECONNECT_TIMEOUT_MS = 10_000;
/** Reopened streams refused 4409 in a row before the game gives up (the engine had not yet seen the old one end). */
const MAX_DUPLICATE_REFUSALS = 20;

export interface GameStreamOptions {
  readonly gameId: string;
  /** Where the game starts: StartGame's engine URLs and stream ticket. */
  readonly home: EngineHome;
  readonly link: StreamLink;
  readonly connect: Connector;
  /**
   * ResumeGame: where the game continues after its engine went away. Without it, a game whose
   * stream breaks ends with an error (a Moved is followed either way).
   */
  readonly resume?: (gameId: string) => Promise<EngineHome>;
  /** Decode every frame into a ClientView (default true); off, the frames are only counted and read for tick and score. */
  readonly views?: boolean;
  readonly hooks?: GameHooks;
  /** Presses before tick T when this says so for T, once per tick, on the game's tick clock. */
  readonly pressBefore?: (tick: number) => boolean;
  /** The game-over (or course-end) frame arrived. */
  readonly onGameOver?: (view: ClientView | undefined) => void;
  readonly now?: () => number;
  /** `client_time_ms` of an input sent at `now()` (default: performance.timeOrigin + now). */
  readonly clientTimeMs?: (now: number) => number;
  /** How long the game tries to get back on an engine before it gives up, ms. */
  readonly reconnectTimeoutMs?: number;
  /** How long to wait for the summary after the game-over frame, ms. */
  readonly summaryTimeoutMs?: number;
}

/** How the game stream went. */
export interface GameStreamOutcome {
  readonly gameId: string;
  readonly score: number;
  readonly ticks: number;
  /** The game-over (or course-end) frame arrived. */
  readonly completed: boolean;
  readonly courseEnd: boolean;
  readonly summary: GameSummary | undefined;
  /** Why the game did not end normally. */
  readonly error: string | undefined;
  /** Times the stream was opened again where the game continued, and the inputs re-sent then. */
  readonly reconnections: number;
  readonly resentInputs: number;
}

/** The stream broke or the engine stopped: the game itself may go on elsewhere. */
export function engineWentAway(end: SessionEnd): boolean {
  return end.failed || end.code === CloseCode.Internal || end.code === CloseCode.Moved || (end.code >= 1001 && end.code < 4000);
}

export class GameStream {
  readonly gameId: string;
  /** Resolves once the game stream is done: summary, a final end, given up, or closed here. */
  readonly done: Promise<void>;

  private readonly opts: GameStreamOptions;
  private readonly hooks: GameHooks;
  private readonly now: () => number;
  private readonly inputs = new InputLog();
  private connection: StreamConnection | undefined;
  private views: FrameDecoder | undefined;
  private home: EngineHome;
  private tickNow = 0;
  private scoreNow = 0;
  private reflected = 0;
  private lastEffect = 0;
  private lastPressTick = 0;
  private over = false;
  private courseEndSeen = false;
  private summaryMsg: GameSummary | undefined;
  private errorText: string | undefined;
  private finished = false;
  private closedByClient = false;
  private reconnecting = false;
  private awaitingResync = false;
  private refusedAsDuplicate = 0;
  private reconnects = 0;
  private resent = 0;
  private summaryTimer: ReturnType<typeof setTimeout> | undefined;
  private resolveDone!: () => void;

  constructor(opts: GameStreamOptions) {
    this.opts = opts;
    this.gameId = opts.gameId;
    this.home = opts.home;
    this.hooks = opts.hooks ?? {};
    this.now = opts.now ?? (() => performance.now());
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  get tick(): number {
    return this.tickNow;
  }
  get score(): number {
    return this.scoreNow;
  }
  /** The last input the engine reflected (in a frame or an ack). */
  get reflectedSeq(): number {
    return this.reflected;
  }
  /** Inputs sent so far, the start input included. */
  get inputsSent(): number {
    return this.inputs.last;
  }
  get isOver(): boolean {
    return this.over || this.finished;
  }
  get summary(): GameSummary | undefined {
    return this.summaryMsg;
  }
  /** The ticket that opens the game's streams now (StartGame's, then the latest Moved's or ResumeGame's). */
  get ticket(): string {
    return this.home.streamTicket;
  }
  /** The open session, until it ends. */
  get session(): StreamConnection | undefined {
    return this.connection;
  }

  /** Opens the stream at the game's engine. Rejects with StreamOpenError when it cannot. */
  async open(): Promise<void> {
    const started = this.now();
    const connection = await this.opts.connect("game", this.urlOf(this.home));
    this.hooks.opened?.("game", connection.via, started, this.now() - started, undefined, 1);
    this.attach(connection);
  }

  /** Sends the start input (seq 1): the game starts. */
  start(): void {
    if (this.inputs.last === 0) this.send();
  }

  /** Sends a flap. False when the game takes no inputs (not started, over, done). */
  flap(): boolean {
    if (!this.connection || this.isOver || this.inputs.last === 0) return false;
    this.send();
    return true;
  }

  /** Ends the game from this side (the player left): the session is closed and not reported as an end. */
  close(reason: string, code = 0): void {
    if (!this.finished) this.errorText ??= reason;
    this.closedByClient = true;
    this.connection?.close(code, reason);
    this.finish();
  }

  outcome(): GameStreamOutcome {
    return {
      gameId: this.gameId,
      score: this.summaryMsg?.score ?? this.scoreNow,
      ticks: this.summaryMsg?.ticks ?? this.tickNow,
      completed: this.over,
      courseEnd: this.courseEndSeen,
      summary: this.summaryMsg,
      error: this.errorText ?? (this.over ? undefined : "the game stream ended before the game was over"),
      reconnections: this.reconnects,
      resentInputs: this.resent,
    };
  }

  private urlOf(home: EngineHome): string {
    return streamUrl(this.opts.link === "websocket" ? home.engineWsUrl : home.engineUrl, this.gameId, home.streamTicket);
  }

  private send(): void {
    const t = this.now();
    const { seq, bytes } = this.inputs.next(this.opts.clientTimeMs ? this.opts.clientTimeMs(t) : performance.timeOrigin + t);
    this.hooks.inputSent?.(seq, t, bytes.length);
    if (!this.connection?.send(bytes) && !this.finished) this.hooks.error?.(`input ${seq} not sent: the game stream is closed`);
  }

  private attach(connection: StreamConnection): void {
    const previous = this.connection;
    this.connection = connection;
    if (previous && previous !== connection) previous.close(0, "the game continues elsewhere");
    const decoder = new DelimitedDecoder(GameStreamMessageSchema);
    this.views = this.opts.views === false ? undefined : new FrameDecoder();
    let time = 0;
    const onMessage = (msg: GameStreamMessage, bytes: number) => this.onMessage(msg, bytes, time);
    connection.read((chunk) => {
      if (connection !== this.connection || this.finished) return;
      time = this.now();
      try {
        decoder.each(chunk, onMessage);
      } catch (err) {
        this.protocolError(connection, err as Error);
      }
    });
    void connection.ended.then((end) => this.onEnd(connection, end));
  }

  private onMessage(msg: GameStreamMessage, bytes: number, time: number): void {
    if (this.finished) return;
    switch (msg.kind.case) {
      case "frame": {
        const frame = msg.kind.value;
        const view = this.views?.apply(frame);
        this.tickNow = frame.tick;
        if (frame.score !== undefined) this.scoreNow = frame.score;
        if (frame.full) this.reflected = frame.reflectedSeq ?? 0;
        else if (frame.reflectedSeq !== undefined) this.reflected = frame.reflectedSeq;
        if (this.awaitingResync && frame.full) {
          // The continued game's first frame: send every input it does not reflect (it may stand
          // before inputs a frame of the old engine reflected, when its snapshot was older).
          this.awaitingResync = false;
          this.refusedAsDuplicate = 0;
          this.resendAfter(this.reflected);
        }
        this.hooks.frame?.(frame, view, time, bytes);
        if (this.reflected > this.lastEffect) {
          for (let seq = this.lastEffect + 1; seq <= this.reflected; seq++) this.hooks.effect?.(seq, frame.tick, time);
          this.lastEffect = this.reflected;
        }
        if ((frame.gameOver || frame.courseEnd) && !this.over) {
          this.over = true;
          this.courseEndSeen = frame.courseEnd;
          this.opts.onGameOver?.(view);
          this.summaryTimer = setTimeout(() => this.finish(), this.opts.summaryTimeoutMs ?? SUMMARY_TIMEOUT_MS);
        } else if (!this.over && this.opts.pressBefore) {
          const next = frame.tick + 1;
          if (next > this.lastPressTick && this.opts.pressBefore(next)) {
            this.lastPressTick = next;
            this.flap();
          }
        }
        return;
      }
      case "ack": {
        const ack = msg.kind.value;
        const view = this.views?.applyAck(ack);
        if (ack.seq > this.reflected) this.reflected = ack.seq;
        this.hooks.ack?.(ack, view, time, bytes);
        return;
      }
      case "moved":
        // Nothing more comes on this stream: open the game's stream at the new engine now.
        this.hooks.moved?.(msg.kind.value, time, bytes);
        if (!this.over) void this.reconnect("moved", msg.kind.value);
        return;
      case "summary":
        this.summaryMsg = msg.kind.value;
        this.hooks.summary?.(msg.kind.value, time, bytes);
        this.finish();
        return;
    }
  }

  private resendAfter(reflected: number): void {
    const { bytes, resent } = this.inputs.resendAfter(reflected);
    this.resent += resent;
    if (bytes && !this.connection?.send(bytes)) this.hooks.error?.("re-sent inputs not sent: the game stream is closed");
  }

  private protocolError(connection: StreamConnection, err: Error): void {
    this.errorText ??= `bad message from the engine: ${err.message}`;
    this.hooks.error?.(this.errorText);
    this.closedByClient = true;
    connection.close(CloseCode.Malformed, err.message.slice(0, 200));
    this.finish();
  }

  private onEnd(connection: StreamConnection, end: SessionEnd): void {
    const byClient = this.closedByClient || connection !== this.connection;
    this.hooks.ended?.("game", end, byClient, this.now());
    // A replaced stream's end says nothing about the game, nor does the current one's while it is replaced.
    if (byClient || this.reconnecting || this.finished) return;
    if (!this.over && this.opts.resume) {
      if (engineWentAway(end)) return void this.reconnect("resumed", undefined);
      // A reopened stream can beat the engine to noticing that the old one broke: it answers 4409
      // until it does. Try again a moment later.
      if (end.code === CloseCode.AlreadyConnected && this.awaitingResync && this.refusedAsDuplicate < MAX_DUPLICATE_REFUSALS) {
        this.refusedAsDuplicate++;
        return void sleep(100).then(() => this.reconnect("resumed", undefined));
      }
    }
    const text = end.failed ? `game stream failed: ${end.reason}` : `game stream closed: ${end.code} ${end.reason}`.trim();
    if (end.failed || end.code !== 0) this.errorText ??= text;
    this.finish();
  }

  /**
   * Opens the game's stream where it continues: at `to` (it moved), or wherever ResumeGame places
   * it, trying again with backoff until the game is placed or the time is up.
   */
  private async reconnect(kind: Reconnection, to: EngineHome | undefined): Promise<void> {
    if (this.reconnecting || this.finished) return;
    this.reconnecting = true;
    const started = this.now();
    const deadline = started + (this.opts.reconnectTimeoutMs ?? RECONNECT_TIMEOUT_MS);
    this.hooks.interrupted?.(kind, this.tickNow, started);
    this.hooks.status?.("reconnecting…");
    let lastError = "";
    try {
      for (let attempt = 0; !this.finished; attempt++) {
        try {
          if (to === undefined && !this.opts.resume) throw new Error("no ResumeGame to ask where the game continues");
          const home = to ?? (await this.opts.resume!(this.gameId));
          to = undefined;
          this.home = home;
          const connection = await this.opts.connect("game", this.urlOf(home));
          if (this.finished) return connection.close(0, "game finished");
          this.reconnects++;
          this.awaitingResync = true;
          this.hooks.opened?.("game", connection.via, started, this.now() - started, kind, attempt + 1);
          this.attach(connection);
          this.hooks.status?.(undefined);
          return;
        } catch (err) {
          lastError = (err as Error).message;
          if (isFinalResumeError(err) || !this.opts.resume || this.now() > deadline) break;
          await sleep(backoffMs(attempt));
        }
      }
      this.hooks.status?.(undefined);
      if (this.finished) return;
      this.errorText ??= `the game's engine went away and the game could not be resumed: ${lastError}`;
      this.hooks.error?.(this.errorText);
      this.finish();
    } finally {
      this.reconnecting = false;
    }
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.summaryTimer);
    this.resolveDone();
  }
}
