// One game's music stream: the sound clips the music component pushes (flap, point, die), and a
// stream that went away opened again while the game goes on.
import { Sound, type SoundClip, SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { CloseCode, DelimitedDecoder } from "@flaplab/game-protocol";
import { type Connector, type StreamConnection, streamUrl } from "./connection.js";
import type { GameHooks } from "./hooks.js";
import { sleep } from "./resume.js";

/** A sound clip carries its audio: a larger limit than the game stream's. */
const MAX_CLIP_BYTES = 4 * 1024 * 1024;

export interface MusicStreamOptions {
  readonly gameId: string;
  /** The music stream's URL without its query (StartGame's `music_url` or `music_ws_url`). */
  readonly base: string;
  readonly connect: Connector;
  /** The ticket that opens the game's streams now. */
  ticket(): string;
  /**
   * A new ticket when the current one no longer opens the stream (ResumeGame's). With it, a music
   * stream that ends abnormally is opened again until it opens or `goesOn()` says the game is over.
   */
  readonly refreshTicket?: () => Promise<string>;
  /** Whether the game still goes on (no point reopening the music of a game that is over). */
  goesOn(): boolean;
  readonly hooks?: GameHooks;
  readonly now?: () => number;
}

/** The lowercase name of a sound ("flap", "point", "die"). */
export function soundName(sound: Sound): string {
  return (Sound[sound] ?? `sound-${sound}`).toLowerCase();
}

export class MusicStream {
  /** Resolves when the die clip arrives. */
  readonly dieClip: Promise<void>;
  private readonly opts: MusicStreamOptions;
  private readonly hooks: GameHooks;
  private readonly now: () => number;
  private connection: StreamConnection | undefined;
  private closing = false;
  private reopening = false;
  private clipCount = 0;
  private dieSeen!: () => void;

  constructor(opts: MusicStreamOptions) {
    this.opts = opts;
    this.hooks = opts.hooks ?? {};
    this.now = opts.now ?? (() => performance.now());
    this.dieClip = new Promise((r) => (this.dieSeen = r));
  }

  /** Clips received so far. */
  get clips(): number {
    return this.clipCount;
  }

  /** Opens the music stream. Rejects with StreamOpenError when it cannot. */
  async open(): Promise<void> {
    const started = this.now();
    const connection = await this.opts.connect("music", streamUrl(this.opts.base, this.opts.gameId, this.opts.ticket()));
    this.hooks.opened?.("music", connection.via, started, this.now() - started, undefined, 1);
    this.attach(connection);
  }

  close(reason: string): void {
    this.closing = true;
    this.connection?.close(0, reason);
  }

  private attach(connection: StreamConnection): void {
    this.connection = connection;
    const decoder = new DelimitedDecoder(SoundClipSchema, MAX_CLIP_BYTES);
    let time = 0;
    const onClip = (clip: SoundClip, bytes: number) => {
      this.clipCount++;
      this.hooks.audio?.(clip, time, bytes);
      if (clip.sound === Sound.DIE) this.dieSeen();
    };
    connection.read((chunk) => {
      if (connection !== this.connection || this.closing) return;
      time = this.now();
      try {
        decoder.each(chunk, onClip);
      } catch (err) {
        this.hooks.error?.(`bad message on the music stream: ${(err as Error).message}`);
        this.hooks.notice?.(`music stream: ${(err as Error).message}`);
        connection.close(CloseCode.Malformed, (err as Error).message.slice(0, 200));
      }
    });
    void connection.ended.then((end) => {
      this.hooks.ended?.("music", end, this.closing, this.now());
      if (this.closing || connection !== this.connection) return;
      if ((end.failed || end.code !== 0) && this.opts.goesOn()) {
        if (this.opts.refreshTicket) void this.reopen();
        else this.hooks.notice?.(end.failed ? `music stream failed: ${end.reason}` : `music stream closed: ${end.code} ${end.reason}`.trim());
      }
    });
  }

  /**
   * Opens the music stream again until it opens or the game ends (250 ms, doubling to 2 s between
   * tries), with the game's current ticket, or a new one every second try (a ticket opens streams
   * for about a minute).
   */
  private async reopen(): Promise<void> {
    if (this.reopening) return;
    this.reopening = true;
    this.hooks.status?.("music unavailable: the game goes on without sound");
    const started = this.now();
    let ticket = this.opts.ticket();
    try {
      for (let attempt = 0; !this.closing && this.opts.goesOn(); attempt++) {
        await sleep(Math.min(250 * 2 ** attempt, 2000));
        if (this.closing || !this.opts.goesOn()) break;
        try {
          if (attempt > 0 && attempt % 2 === 0) ticket = await this.opts.refreshTicket!();
          else ticket = this.opts.ticket();
          const connection = await this.opts.connect("music", streamUrl(this.opts.base, this.opts.gameId, ticket));
          if (this.closing) return connection.close(0, "game finished");
          this.hooks.opened?.("music", connection.via, started, this.now() - started, "resumed", attempt + 1);
          this.attach(connection);
          this.hooks.status?.(undefined);
          return;
        } catch (err) {
          this.hooks.error?.(`music stream not reopened: ${(err as Error).message}`);
        }
      }
    } finally {
      this.reopening = false;
    }
  }
}
