import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ClientInputSchema,
  GameStreamMessageSchema,
  type GameSummary,
} from "@flaplab/contracts/engine/v1/stream_pb";
import { Sound, SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import type { StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { CloseCode, DelimitedDecoder, encodeDelimited } from "@flaplab/game-protocol";
import { createViewDecoder, type ClientView } from "./frames.js";
import type { LatencyLog } from "./latency-log.js";
import { TraceRecorder } from "./trace-recorder.js";
import { openWebSocketStream, type StreamLink } from "./stream-link.js";
import { openStream, StreamOpenError, streamUrl, type OpenStream } from "./webtransport.js";

/** How long to wait for the engine's GameSummary after the game-over frame. */
const SUMMARY_TIMEOUT_MS = 10_000;
/** After the game stream ends: how long the music stream stays open for a late DIE clip. */
const MUSIC_GRACE_MS = 500;
/** How long the page tries to get a game back on an engine before it gives up. */
const RECONNECT_TIMEOUT_MS = 10_000;
/** Inputs kept to re-send after a move (only the unreflected ones are ever needed). */
const KEPT_INPUTS = 64;

/** Where the game continues: an engine's stream URLs and the ticket that opens them. */
export interface EngineHome {
  readonly engineUrl: string;
  readonly engineWsUrl: string;
  readonly streamTicket: string;
}

export interface GameResult {
  readonly gameId: string;
  readonly seed: bigint;
  readonly score: number;
  readonly ticks: number;
  /** The game-over (or course-end) frame arrived. */
  readonly completed: boolean;
  readonly courseEnd: boolean;
  readonly engineSummary: GameSummary | undefined;
  /** Why the game did not end normally (a stream closed abnormally, a broken frame, …). */
  readonly error: string | undefined;
  /** The FlapLab trace JSON of the game. */
  readonly trace: string;
  /** Times the game stream was opened again where the game continued (moved, or resumed). */
  readonly reconnections: number;
  /** Inputs sent again after those reconnections. */
  readonly resentInputs: number;
}

export interface GameRunOptions {
  /** StartGame's answer: the stream URLs and the stream ticket both streams are opened with. */
  readonly start: StartGameResponse;
  /** Let the WebTransport polyfill try native HTTP/3 first. */
  readonly allowNative: boolean;
  /** WebTransport (the default) or plain WebSocket, at StartGame's `*_ws_url`s. */
  readonly link?: StreamLink;
  readonly log: LatencyLog;
  /** Plays sound clips (rejects when it cannot; the rejection is logged). */
  readonly sound: { play(audio: Uint8Array): Promise<void> };
  /** The newest decoded frame (the page draws it on the next animation frame). */
  onView(view: ClientView): void;
  /** Something went wrong that the player should see; the game may go on. */
  onNotice(text: string): void;
  /** The game-over frame arrived: inputs stop. */
  onGameOver?(view: ClientView): void;
  /**
   * Continues the game on a live engine after its engine went away (the initiator's ResumeGame).
   * Without it, a game whose stream breaks ends with an error.
   */
  resume?(gameId: string): Promise<EngineHome>;
  /** "reconnecting…" while the game waits for an engine; undefined once it plays again. */
  onStatus?(text: string | undefined): void;
  readonly now?: () => number;
  /** Opens a session (tests pass a fake). */
  readonly openStream?: typeof openStream;
}

export function soundName(sound: Sound): string {
  return (Sound[sound] ?? `sound-${sound}`).toLowerCase();
}

/**
 * One game on its two streams. `open` opens the music session, then the game session, and sends
 * the start input (seq 1); `flap` sends one input; `finished` resolves once the game has ended
 * and both sessions are closed.
 */
export class GameRun {
  readonly gameId: string;
  readonly seed: bigint;
  readonly finished: Promise<GameResult>;

  private readonly opts: GameRunOptions;
  private readonly now: () => number;
  private readonly trace: TraceRecorder;
  private game: OpenStream | undefined;
  private music: OpenStream | undefined;
  private writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  private seq = 0;
  private lastView: ClientView | undefined;
  private engineSummary: GameSummary | undefined;
  private over = false;
  /** The end sequence has started: no more inputs. */
  private ending = false;
  /** The client is closing the sessions: their ends are not reported. */
  private closing = false;
  private error: string | undefined;
  private resolveFinished!: (result: GameResult) => void;
  private gameDone!: () => void;
  private readonly gameDonePromise: Promise<void>;
  private dieClipSeen!: () => void;
  private readonly dieClip: Promise<void>;
  /** The game stream is being opened again (moved or resumed): the old one's end is expected. */
  private reconnecting = false;
  /** The bytes of recent inputs by seq, to re-send after a move. */
  private readonly sentInputs = new Map<number, Uint8Array>();
  /** Moves and resumes so far, and the inputs re-sent after them. */
  private reconnects = 0;
  private resentInputs = 0;
  /** Reopened: the continued game's full frame has not come yet. */
  private awaitingResync = false;
  /** Reopened streams refused 4409 in a row (the engine had not yet seen the old stream end). */
  private refusedAsDuplicate = 0;
  /** The ticket that opens the game's streams now (StartGame's, then the latest Moved or resume's). */
  private ticket: string;
  /** The music stream is being reopened. */
  private musicLost = false;

  constructor(opts: GameRunOptions) {
    this.opts = opts;
    this.now = opts.now ?? (() => performance.now());
    this.gameId = opts.start.gameId;
    this.seed = opts.start.seed;
    this.trace = new TraceRecorder(opts.start.seed);
    this.ticket = opts.start.streamTicket;
    this.finished = new Promise((r) => (this.resolveFinished = r));
    this.gameDonePromise = new Promise((r) => (this.gameDone = r));
    this.dieClip = new Promise((r) => (this.dieClipSeen = r));
  }

  /** Inputs sent so far (the start input included). */
  get inputsSent(): number {
    return this.seq;
  }

  /** True once the game-over frame arrived or the game is ending (no more inputs are sent). */
  get isOver(): boolean {
    return this.over || this.ending;
  }

  /** Opens both sessions and sends the start input. Throws StreamOpenError when a session fails. */
  async open(): Promise<void> {
    const { start, allowNative, log } = this.opts;
    const ws = this.opts.link === "websocket";
    const open = this.opts.openStream ?? (ws ? (kind: string, url: string) => openWebSocketStream(kind, url) : openStream);
    const [engineBase, musicBase] = ws ? [start.engineWsUrl, start.musicWsUrl] : [start.engineUrl, start.musicUrl];
    if (engineBase === "" || musicBase === "") {
      throw new StreamOpenError(`the server gave no ${ws ? "WebSocket" : "WebTransport"} stream URL for this game`, engineBase === "" ? "game" : "music");
    }
    let t = this.now();
    this.music = await open("music", streamUrl(musicBase, start.gameId, start.streamTicket), allowNative);
    log.rtt("open", t, this.now() - t, `music via ${this.music.via}`);
    t = this.now();
    try {
      this.game = await open("game", streamUrl(engineBase, start.gameId, start.streamTicket), allowNative);
    } catch (err) {
      this.music.close(0, "game stream failed");
      throw err;
    }
    log.rtt("open", t, this.now() - t, `game via ${this.game.via}`);
    this.attachGame(this.game);
    void this.readMusic(this.music);
    void this.watchEnd(this.music, "music");
    void this.gameDonePromise.then(() => this.finish());
    this.send();
  }

  /** Moves and resumes the game went through. */
  get reconnections(): number {
    return this.reconnects;
  }

  private attachGame(game: OpenStream): void {
    this.game = game;
    this.writer = game.stream.writable.getWriter();
    void this.readGame(game);
    void this.watchEnd(game, "game");
  }

  /**
   * Opens the game's stream where it continues: at `home` (it moved), or wherever ResumeGame
   * places it. The engine first sends a full frame of the tick the game stands at; the answer
   * re-sends every input after the one that frame reflects (the latest input when there is none),
   * and the engine drops those it already applied.
   */
  private async reconnect(home: EngineHome | undefined): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    try {
      await this.reopenGame(home);
    } finally {
      this.reconnecting = false;
    }
  }

  private async reopenGame(home: EngineHome | undefined): Promise<void> {
    const started = this.now();
    const deadline = started + RECONNECT_TIMEOUT_MS;
    this.opts.onStatus?.("reconnecting…");
    const ws = this.opts.link === "websocket";
    const open = this.opts.openStream ?? (ws ? (kind: string, url: string) => openWebSocketStream(kind, url) : openStream);
    let lastError = "";
    for (let attempt = 0; !this.ending; attempt++) {
      try {
        const target = home ?? (await this.opts.resume!(this.gameId));
        home = undefined;
        this.ticket = target.streamTicket;
        const base = ws ? target.engineWsUrl : target.engineUrl;
        const game = await open("game", streamUrl(base, this.gameId, target.streamTicket), this.opts.allowNative);
        if (this.ending) {
          game.close(0, "game finished");
          return;
        }
        this.reconnects++;
        this.awaitingResync = true;
        this.attachGame(game);
        this.opts.log.rtt("reopen", started, this.now() - started, `game via ${game.via} (${attempt + 1} attempt(s))`);
        this.opts.onStatus?.(undefined);
        return;
      } catch (err) {
        lastError = (err as Error).message;
        // No engine will ever take it (no snapshot, another player's, over): no point in waiting.
        if (err instanceof ConnectError && FINAL_RESUME_CODES.has(err.code)) break;
        if (this.now() > deadline) break;
        await sleep(Math.min(50 * 2 ** attempt, 500));
      }
    }
    this.opts.onStatus?.(undefined);
    this.error ??= `the game's engine went away and the game could not be resumed: ${lastError}`;
    this.opts.log.error(this.error);
    this.gameDone();
  }

  /** Re-sends, in one write, every input after `reflected`, or the latest input when there is none. */
  private resend(reflected: number): void {
    const seqs = [...this.sentInputs.keys()].filter((q) => q > reflected);
    this.resentInputs += seqs.length;
    if (seqs.length === 0 && this.seq > 0) seqs.push(this.seq);
    const chunks = seqs.sort((a, b) => a - b).flatMap((q) => {
      const bytes = this.sentInputs.get(q);
      return bytes ? [bytes] : [];
    });
    if (chunks.length === 0) return;
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    this.writer?.write(all).catch((err: unknown) => this.opts.log.error(`re-sent inputs not sent: ${(err as Error).message}`));
  }

  /** Sends a flap. False when the game is not accepting inputs (over, ending, not open). */
  flap(): boolean {
    if (!this.writer || this.isOver || this.seq === 0) return false;
    this.send();
    return true;
  }

  /** Ends the game from the client side (logout, page hidden). */
  abort(reason: string): void {
    if (this.ending) return;
    this.error ??= reason;
    this.closing = true;
    this.game?.close(0, reason);
    this.music?.close(0, reason);
    this.gameDone();
  }

  private send(): void {
    const writer = this.writer;
    if (!writer) return;
    const seq = ++this.seq;
    const t = this.now();
    const bytes = encodeDelimited(
      ClientInputSchema,
      create(ClientInputSchema, { seq, clientTimeMs: performance.timeOrigin + t }),
    );
    this.opts.log.add({ type: "input", direction: "send", time: t, seq, bytes: bytes.length });
    this.sentInputs.set(seq, bytes);
    if (this.sentInputs.size > KEPT_INPUTS) this.sentInputs.delete(this.sentInputs.keys().next().value!);
    if (seq === 1) this.trace.start(t);
    else this.trace.input(seq, t);
    writer.write(bytes).catch((err: unknown) => {
      if (!this.ending) this.opts.log.error(`input ${seq} not sent: ${(err as Error).message}`, { seq });
    });
  }

  private async readGame(game: OpenStream): Promise<void> {
    const decoder = new DelimitedDecoder(GameStreamMessageSchema);
    const views = createViewDecoder();
    const reader = game.stream.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const time = this.now();
        for (const { message: msg, bytes } of decoder.pushSized(value)) {
          if (msg.kind.case === "ack") {
            // The engine applied a flap; nothing moves until the next tick frame, which the
            // trace and the renderer wait for.
            const view = views.applyAck(msg.kind.value);
            this.opts.log.ack(view.tick, view.reflectedSeq, bytes, time);
          } else if (msg.kind.case === "frame") {
            const view = views.apply(msg.kind.value);
            // A continued game's full frame: answer with the inputs it does not reflect (it may
            // stand before inputs a frame of the old engine reflected, if its snapshot was older).
            if (this.awaitingResync && msg.kind.value.full) {
              this.awaitingResync = false;
              this.refusedAsDuplicate = 0;
              this.resend(view.reflectedSeq);
            }
            this.opts.log.frame(view.tick, view.reflectedSeq, bytes, time);
            this.trace.reflected(view.reflectedSeq, view.tick);
            this.lastView = view;
            this.opts.onView(view);
            if ((view.gameOver || view.courseEnd) && !this.over) {
              this.over = true;
              this.opts.onGameOver?.(view);
              setTimeout(() => this.gameDone(), SUMMARY_TIMEOUT_MS);
            }
          } else if (msg.kind.case === "moved") {
            // Nothing more comes here: open the stream at the new engine now, not at this one's close.
            this.opts.log.add({ type: "close", direction: "recv", time, bytes, note: `game moved at tick ${msg.kind.value.tick}` });
            if (!this.over && !this.ending) void this.reconnect(msg.kind.value);
          } else if (msg.kind.case === "summary") {
            this.engineSummary = msg.kind.value;
            this.opts.log.add({ type: "summary", direction: "recv", time, bytes, note: summaryNote(msg.kind.value) });
            this.gameDone();
          }
        }
      }
    } catch (err) {
      if (!this.ending) {
        const message = (err as Error).message;
        // A stream error caused by the session closing is reported by watchEnd with its code.
        if ((err as Error).name === "StreamProtocolError" || (err as Error).name === "FrameDecodeError") {
          this.error ??= `bad message from the engine: ${message}`;
          this.opts.log.error(this.error);
          game.close(CloseCode.Malformed, message.slice(0, 200));
        }
      }
    } finally {
      reader.releaseLock();
      // An ended stream before game over is watchEnd's to judge (the game may move or resume).
      if (this.over) this.gameDone();
    }
  }

  private async readMusic(music: OpenStream): Promise<void> {
    const decoder = new DelimitedDecoder(SoundClipSchema, 4 * 1024 * 1024);
    const reader = music.stream.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const time = this.now();
        for (const { message: clip, bytes } of decoder.pushSized(value)) {
          const sound = soundName(clip.sound);
          this.opts.log.audio(clip.inputSeq, clip.tick, sound, bytes, time);
          if (clip.sound === Sound.DIE) this.dieClipSeen();
          this.opts.sound.play(clip.audio).catch((err: unknown) => {
            this.opts.log.error(`cannot play ${sound}: ${(err as Error).message}`, {
              seq: clip.inputSeq,
              tick: clip.tick,
              sound,
            });
          });
        }
      }
    } catch (err) {
      if (!this.ending && ((err as Error).name === "StreamProtocolError")) {
        this.opts.log.error(`bad message on the music stream: ${(err as Error).message}`);
        this.opts.onNotice(`music stream: ${(err as Error).message}`);
        music.close(CloseCode.Malformed, (err as Error).message.slice(0, 200));
      }
    } finally {
      reader.releaseLock();
    }
  }

  /** Logs how a session ended; an abnormal end of the game session ends the game. */
  private async watchEnd(session: OpenStream, kind: "game" | "music"): Promise<void> {
    const end = await session.ended;
    const byUs = this.closing;
    const text = end.failed ? `${kind} stream failed: ${end.reason}` : `${kind} stream closed: ${end.code} ${end.reason}`.trim();
    this.opts.log.add({ type: "close", direction: byUs ? "local" : "recv", time: this.now(), note: text });
    if (byUs) return;
    const abnormal = end.failed || end.code !== 0;
    // A replaced stream's end says nothing about the game, nor does the old one's while it is replaced.
    if (kind === "game" && (session !== this.game || this.reconnecting)) return;
    if (kind === "game" && !this.over && !this.ending) {
      if (this.opts.resume && engineWentAway(end)) return void this.reconnect(undefined);
      // A reopened stream can beat the engine to noticing that the old one broke (a cut link):
      // it answers 4409 until it does. Try again a moment later.
      if (this.opts.resume && end.code === CloseCode.AlreadyConnected && this.awaitingResync && this.refusedAsDuplicate < 20) {
        this.refusedAsDuplicate++;
        return void sleep(100).then(() => this.reconnect(undefined));
      }
    }
    if (kind === "game") {
      if (abnormal) this.error ??= text;
      this.gameDone();
    } else if (abnormal && !this.over && session === this.music) {
      // Music went away: the game goes on without sound while the page gets its stream back.
      if (this.opts.resume) return void this.reconnectMusic();
      this.opts.onNotice(text);
    }
  }

  /**
   * Reopens the music stream until it opens or the game ends (250 ms, doubling to 2 s between
   * tries), with the game's current ticket, or a new one from ResumeGame once that one fails (a
   * ticket opens streams for about a minute).
   */
  private async reconnectMusic(): Promise<void> {
    if (this.musicLost) return;
    this.musicLost = true;
    this.opts.onStatus?.("music unavailable: the game goes on without sound");
    const open = this.opts.openStream ?? (this.opts.link === "websocket" ? (kind: string, url: string) => openWebSocketStream(kind, url) : openStream);
    const base = this.opts.link === "websocket" ? this.opts.start.musicWsUrl : this.opts.start.musicUrl;
    const started = this.now();
    for (let attempt = 0; !this.ending && !this.over; attempt++) {
      await sleep(Math.min(250 * 2 ** attempt, 2000));
      if (this.ending || this.over) break;
      try {
        if (attempt > 0 && attempt % 2 === 0) this.ticket = (await this.opts.resume!(this.gameId)).streamTicket;
        const music = await open("music", streamUrl(base, this.gameId, this.ticket), this.opts.allowNative);
        if (this.ending) {
          music.close(0, "game finished");
          break;
        }
        this.music = music;
        void this.readMusic(music);
        void this.watchEnd(music, "music");
        this.opts.log.rtt("reopen", started, this.now() - started, `music via ${music.via} (${attempt + 1} attempt(s))`);
        this.opts.onStatus?.(undefined);
        this.musicLost = false;
        return;
      } catch (err) {
        this.opts.log.error(`music stream not reopened: ${(err as Error).message}`);
      }
    }
    this.musicLost = false;
  }

  private async finish(): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    if (this.over) {
      // The DIE clip often arrives after the game-over frame: give it a moment.
      await Promise.race([this.dieClip, sleep(MUSIC_GRACE_MS)]);
    } else if (this.game) {
      // Ended early: let the session's close code and reason arrive (watchEnd records them).
      await Promise.race([this.game.ended, sleep(300)]);
      await sleep(0);
    }
    this.closing = true;
    this.game?.close(0, "game finished");
    this.music?.close(0, "game finished");
    const view = this.lastView;
    this.resolveFinished({
      gameId: this.gameId,
      seed: this.seed,
      score: this.engineSummary?.score ?? view?.score ?? 0,
      ticks: this.engineSummary?.ticks ?? view?.tick ?? 0,
      completed: this.over,
      courseEnd: view?.courseEnd ?? false,
      engineSummary: this.engineSummary,
      error: this.error ?? (this.over ? undefined : "the game stream ended before the game was over"),
      trace: this.trace.toJson(),
      reconnections: this.reconnects,
      resentInputs: this.resentInputs,
    });
  }
}

/** ResumeGame answers after which trying again cannot help. */
const FINAL_RESUME_CODES: ReadonlySet<Code> = new Set([Code.NotFound, Code.PermissionDenied, Code.FailedPrecondition, Code.Unauthenticated, Code.InvalidArgument]);

/** The stream broke, or the engine stopped: the game itself may go on elsewhere. */
function engineWentAway(end: { failed: boolean; code: number }): boolean {
  return end.failed || end.code === CloseCode.Internal || end.code === CloseCode.Moved || (end.code >= 1001 && end.code < 4000);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function summaryNote(s: GameSummary): string {
  return s.recorded ? "recorded" : `not recorded: ${s.recordError}`;
}
