import { Code, ConnectError } from "@connectrpc/connect";
import type { SoundClip } from "@flaplab/contracts/music/v1/music_pb";

/** Delivers one clip to a game's music stream (e.g. writes it to a WebTransport stream). */
export type ClipSink = (clip: SoundClip) => void | Promise<void>;

/**
 * Why a stream closed: its owner closed it ("closed"), a clip was sent with
 * `closeAfter` ("game-over"), or the sink threw ("sink-failed").
 */
export type MusicStreamCloseReason = "closed" | "game-over" | "sink-failed";

/** The owner's side of one open music stream. */
export interface MusicStreamHandle {
  readonly gameId: string;
  /** Closes the stream; idempotent. Clips queued behind the one being delivered are dropped. */
  close(): void;
  /** Resolves once, when the stream closes for any reason. The owner ends its transport stream then. */
  readonly closed: Promise<MusicStreamCloseReason>;
}

export interface SendOptions {
  /** Close the stream right after this clip is delivered (used for the game-over sound). */
  readonly closeAfter?: boolean;
}

/**
 * Transport-free registry of music outlets, one per game. A transport opens a
 * stream when the player's client connects and closes it when the client leaves;
 * the music component sends clips to it.
 */
export interface MusicStreams {
  /**
   * Registers `sink` as the music stream of `gameId`. There is at most one stream
   * per game: opening a second one while the first is open throws AlreadyExists.
   * A game may open a new stream once the previous one has closed.
   */
  open(gameId: string, sink: ClipSink): MusicStreamHandle;
  /** Whether `gameId` has an open stream. */
  has(gameId: string): boolean;
  /**
   * Hands `clip` to the game's sink. Clips for one game are delivered in call
   * order, one at a time; games never wait on each other. Rejects with NotFound
   * when the game has no open stream (or it closed before the clip's turn), and
   * with Unavailable when the sink throws, which also closes that stream.
   */
  send(gameId: string, clip: SoundClip, options?: SendOptions): Promise<void>;
}

interface Entry {
  readonly sink: ClipSink;
  open: boolean;
  /** Settles when every clip sent so far has been handled. */
  tail: Promise<void>;
  shut(reason: MusicStreamCloseReason): void;
}

export function createMusicStreams(): MusicStreams {
  const entries = new Map<string, Entry>();

  function open(gameId: string, sink: ClipSink): MusicStreamHandle {
    if (gameId === "") {
      throw new ConnectError("game id is required to open a music stream", Code.InvalidArgument);
    }
    if (entries.has(gameId)) {
      throw new ConnectError(
        `a music stream for game ${gameId} is already open (one per game)`,
        Code.AlreadyExists,
      );
    }
    let resolveClosed: (reason: MusicStreamCloseReason) => void = () => {};
    const closed = new Promise<MusicStreamCloseReason>((resolve) => {
      resolveClosed = resolve;
    });
    const entry: Entry = {
      sink,
      open: true,
      tail: Promise.resolve(),
      shut(reason) {
        if (!entry.open) return;
        entry.open = false;
        if (entries.get(gameId) === entry) entries.delete(gameId);
        resolveClosed(reason);
      },
    };
    entries.set(gameId, entry);
    return { gameId, close: () => entry.shut("closed"), closed };
  }

  function send(gameId: string, clip: SoundClip, options?: SendOptions): Promise<void> {
    const entry = entries.get(gameId);
    if (!entry) return Promise.reject(noStream(gameId));
    const deliver = async (): Promise<void> => {
      if (!entry.open) throw noStream(gameId);
      try {
        await entry.sink(clip);
      } catch (err) {
        entry.shut("sink-failed");
        const reason = err instanceof Error ? err.message : String(err);
        throw new ConnectError(
          `music stream for game ${gameId} failed: ${reason}`,
          Code.Unavailable,
          undefined,
          undefined,
          err,
        );
      }
      if (options?.closeAfter) entry.shut("game-over");
    };
    const result = entry.tail.then(deliver);
    entry.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  return { open, has: (gameId) => entries.has(gameId), send };
}

function noStream(gameId: string): ConnectError {
  return new ConnectError(`no music stream for game ${gameId}`, Code.NotFound);
}
