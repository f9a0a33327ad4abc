// One game of this page, played by @flaplab/game-client: its events go to the latency log, the
// trace recorder, the sound player and the page.
import type { GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import type { StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { type Connector, type EngineHome, Game, type GameHooks, type SessionEnd, soundName, type StreamKind } from "@flaplab/game-client";
import type { ClientView } from "./frames.js";
import type { LatencyLog } from "./latency-log.js";
import { pageConnector, type StreamLink } from "./stream-link.js";
import { TraceRecorder } from "./trace-recorder.js";

export type { EngineHome };
export { soundName };

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
  /** Opens the stream sessions (tests pass a fake; default: the browser's transport of the link). */
  readonly connect?: Connector;
}

function endText(kind: StreamKind, end: SessionEnd): string {
  return end.failed ? `${kind} stream failed: ${end.reason}` : `${kind} stream closed: ${end.code} ${end.reason}`.trim();
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
  private readonly game: Game;

  constructor(opts: GameRunOptions) {
    const now = opts.now ?? (() => performance.now());
    const link = opts.link ?? "webtransport";
    const { log } = opts;
    this.gameId = opts.start.gameId;
    this.seed = opts.start.seed;
    const trace = new TraceRecorder(opts.start.seed);
    const hooks: GameHooks = {
      inputSent: (seq, time, bytes) => {
        log.add({ type: "input", direction: "send", time, seq, bytes });
        if (seq === 1) trace.start(time);
        else trace.input(seq, time);
      },
      // The engine applied a flap; nothing moves until the next tick frame, which the trace and
      // the renderer wait for.
      ack: (_ack, view, time, bytes) => log.ack(view!.tick, view!.reflectedSeq, bytes, time),
      frame: (_frame, view, time, bytes) => {
        log.frame(view!.tick, view!.reflectedSeq, bytes, time);
        trace.reflected(view!.reflectedSeq, view!.tick);
        opts.onView(view!);
      },
      moved: (moved, time, bytes) => log.add({ type: "close", direction: "recv", time, bytes, note: `game moved at tick ${moved.tick}` }),
      summary: (summary, time, bytes) =>
        log.add({ type: "summary", direction: "recv", time, bytes, note: summary.recorded ? "recorded" : `not recorded: ${summary.recordError}` }),
      audio: (clip, time, bytes) => {
        const sound = soundName(clip.sound);
        log.audio(clip.inputSeq, clip.tick, sound, bytes, time);
        opts.sound.play(clip.audio).catch((err: unknown) => {
          log.error(`cannot play ${sound}: ${(err as Error).message}`, { seq: clip.inputSeq, tick: clip.tick, sound });
        });
      },
      opened: (kind, via, startedAt, ms, reopened, attempts) =>
        reopened ? log.rtt("reopen", startedAt, ms, `${kind} via ${via} (${attempts} attempt(s))`) : log.rtt("open", startedAt, ms, `${kind} via ${via}`),
      ended: (kind, end, byClient) => log.add({ type: "close", direction: byClient ? "local" : "recv", time: now(), note: endText(kind, end) }),
      ...(opts.onStatus ? { status: (text) => opts.onStatus!(text) } : {}),
      error: (text) => log.error(text),
      notice: (text) => opts.onNotice(text),
    };
    this.game = new Game({
      start: opts.start,
      link,
      connect: opts.connect ?? pageConnector(link, opts.allowNative),
      ...(opts.resume ? { resume: (gameId) => opts.resume!(gameId) } : {}),
      hooks,
      now,
      onGameOver: (view) => opts.onGameOver?.(view!),
    });
    this.finished = this.game.finished.then((r) => ({
      gameId: r.gameId,
      seed: r.seed,
      score: r.score,
      ticks: r.ticks,
      completed: r.completed,
      courseEnd: r.courseEnd,
      engineSummary: r.summary,
      error: r.error,
      trace: trace.toJson(),
      reconnections: r.reconnections,
      resentInputs: r.resentInputs,
    }));
  }

  /** Inputs sent so far (the start input included). */
  get inputsSent(): number {
    return this.game.stream.inputsSent;
  }

  /** True once the game-over frame arrived or the game is ending (no more inputs are sent). */
  get isOver(): boolean {
    return this.game.stream.isOver;
  }

  /** Moves and resumes the game went through. */
  get reconnections(): number {
    return this.game.stream.outcome().reconnections;
  }

  /** Opens both sessions and sends the start input. Throws StreamOpenError when a session fails. */
  async open(): Promise<void> {
    await this.game.open();
    this.game.start();
  }

  /** Sends a flap. False when the game is not accepting inputs (over, ending, not open). */
  flap(): boolean {
    return this.game.flap();
  }

  /** Ends the game from the client side (logout, page hidden). */
  abort(reason: string): void {
    this.game.abort(reason);
  }
}
