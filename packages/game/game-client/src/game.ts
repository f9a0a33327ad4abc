// A game on both its streams, from StartGame's answer to the end: the music stream first, then
// the game stream and its start input; at the end, a moment for the die clip, then both closed.
import type { ClientView } from "@flaplab/game-protocol";
import { type Connector, StreamOpenError } from "./connection.js";
import { GameStream, type GameStreamOutcome, type StreamLink } from "./game-stream.js";
import type { GameHooks } from "./hooks.js";
import { MusicStream } from "./music-stream.js";
import { type EngineHome, sleep } from "./resume.js";

/** After the game-over frame: how long the music stream stays open for a late die clip, ms. */
const MUSIC_GRACE_MS = 500;

/** What StartGame answers that a game needs (a StartGameResponse fits). */
export interface StartedGame extends EngineHome {
  readonly gameId: string;
  readonly seed: bigint;
  readonly musicUrl: string;
  readonly musicWsUrl: string;
}

export interface GameOptions {
  readonly start: StartedGame;
  readonly link: StreamLink;
  readonly connect: Connector;
  /** ResumeGame; with it a game survives its engine, and its music stream is reopened when it breaks. */
  readonly resume?: (gameId: string) => Promise<EngineHome>;
  /** Open the music stream too (default true). */
  readonly music?: boolean;
  readonly views?: boolean;
  readonly hooks?: GameHooks;
  readonly pressBefore?: (tick: number) => boolean;
  readonly onGameOver?: (view: ClientView | undefined) => void;
  readonly now?: () => number;
  readonly reconnectTimeoutMs?: number;
}

export interface GameResult extends GameStreamOutcome {
  readonly seed: bigint;
  /** Sound clips the music stream brought. */
  readonly clips: number;
}

export class Game {
  readonly gameId: string;
  readonly stream: GameStream;
  readonly music: MusicStream | undefined;
  /** Resolves once the game has ended and both sessions are closed. */
  readonly finished: Promise<GameResult>;
  private readonly opts: GameOptions;
  private resolveFinished!: (result: GameResult) => void;
  private opened = false;

  constructor(opts: GameOptions) {
    this.opts = opts;
    this.gameId = opts.start.gameId;
    this.finished = new Promise((r) => (this.resolveFinished = r));
    const { start } = opts;
    this.stream = new GameStream({
      gameId: start.gameId,
      home: start,
      link: opts.link,
      connect: opts.connect,
      ...(opts.resume ? { resume: opts.resume } : {}),
      ...(opts.views !== undefined ? { views: opts.views } : {}),
      ...(opts.hooks ? { hooks: opts.hooks } : {}),
      ...(opts.pressBefore ? { pressBefore: opts.pressBefore } : {}),
      ...(opts.onGameOver ? { onGameOver: opts.onGameOver } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.reconnectTimeoutMs !== undefined ? { reconnectTimeoutMs: opts.reconnectTimeoutMs } : {}),
    });
    const resume = opts.resume;
    this.music =
      opts.music === false
        ? undefined
        : new MusicStream({
            gameId: start.gameId,
            base: opts.link === "websocket" ? start.musicWsUrl : start.musicUrl,
            connect: opts.connect,
            ticket: () => this.stream.ticket,
            ...(resume ? { refreshTicket: async () => (await resume(start.gameId)).streamTicket } : {}),
            goesOn: () => !this.stream.isOver,
            ...(opts.hooks ? { hooks: opts.hooks } : {}),
            ...(opts.now ? { now: opts.now } : {}),
          });
  }

  /** Opens the music stream, then the game stream. Rejects with StreamOpenError when either fails. */
  async open(): Promise<void> {
    const { start, link } = this.opts;
    const [engineBase, musicBase] = link === "websocket" ? [start.engineWsUrl, start.musicWsUrl] : [start.engineUrl, start.musicUrl];
    if (engineBase === "" || (this.music && musicBase === "")) {
      throw new StreamOpenError(`the server gave no ${link === "websocket" ? "WebSocket" : "WebTransport"} stream URL for this game`, engineBase === "" ? "game" : "music");
    }
    await this.music?.open();
    try {
      await this.stream.open();
    } catch (err) {
      this.music?.close("game stream failed");
      throw err;
    }
    this.opened = true;
    void this.stream.done.then(() => this.finish());
  }

  /** Sends the start input. */
  start(): void {
    this.stream.start();
  }

  /** Opens both streams and starts the game. */
  async play(): Promise<GameResult> {
    await this.open();
    this.start();
    return this.finished;
  }

  flap(): boolean {
    return this.stream.flap();
  }

  /** Ends the game from this side (logout, page hidden). */
  abort(reason: string): void {
    this.music?.close(reason);
    this.stream.close(reason);
  }

  private async finish(): Promise<void> {
    if (!this.opened) return;
    const session = this.stream.session;
    // The engine closes the session after the summary (or with the reason it ended the game):
    // let that close arrive rather than close first.
    if (session) await Promise.race([session.ended, sleep(300)]);
    // The die clip often comes after the game-over frame: give it a moment.
    if (this.stream.outcome().completed && this.music) await Promise.race([this.music.dieClip, sleep(MUSIC_GRACE_MS)]);
    await sleep(0);
    this.stream.close("game finished");
    this.music?.close("game finished");
    this.resolveFinished({ ...this.stream.outcome(), seed: this.opts.start.seed, clips: this.music?.clips ?? 0 });
  }
}
