// What the game client needs of a stream session, whatever carries it (WebTransport or WebSocket,
// in Node or a browser): bytes in, bytes out, one end.

/** How a session ended. */
export interface SessionEnd {
  /** The stream close code (0: a normal end; WebSocket's 1000 and 1005 are reported as 0). */
  readonly code: number;
  readonly reason: string;
  /** The session broke (a transport error, a connection lost without a close). */
  readonly failed: boolean;
}

/** One open stream session of a game: the game stream or the music stream. */
export interface StreamConnection {
  /** What carries it ("plain websocket", "websocket" or "native" for WebTransport, …). */
  readonly via: string;
  /** Resolves once the session has ended, however it ended; never rejects. */
  readonly ended: Promise<SessionEnd>;
  /**
   * Hands every chunk of bytes the server sends to `onChunk`, in order (those that came before
   * the call first). Called once.
   */
  read(onChunk: (bytes: Uint8Array) => void): void;
  /** Writes bytes to the server; false once the session is closed. */
  send(bytes: Uint8Array): boolean;
  /** Closes the session (0: normal). Idempotent. */
  close(code?: number, reason?: string): void;
}

/** Which stream a session is for. */
export type StreamKind = "game" | "music";

/** Opens a session at `url`; rejects with StreamOpenError when it cannot. */
export type Connector = (kind: StreamKind, url: string) => Promise<StreamConnection>;

/** The session could not be opened (refused, unreachable, TLS, not ready in time). */
export class StreamOpenError extends Error {
  override readonly name = "StreamOpenError";
  constructor(
    message: string,
    readonly stream: StreamKind,
    /** Where a player can accept the stream server's certificate (none for a `ws://` link). */
    readonly certificateUrl?: string,
    /** The HTTP status the server refused the upgrade with, when the transport tells it. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * `<base>?gameId=<id>&ticket=<stream ticket>` (other query parameters of `base` are kept). The
 * ticket comes with StartGame, Moved or ResumeGame; the player's token never goes into a stream URL.
 */
export function streamUrl(base: string, gameId: string, ticket: string): string {
  const url = new URL(base);
  url.searchParams.set("gameId", gameId);
  url.searchParams.set("ticket", ticket);
  return url.toString();
}

/** The page a player opens once to accept a stream server's self-signed certificate. */
export function certificatePageUrl(streamBase: string): string {
  return `https://${new URL(streamBase.replace(/^ws(s?):/, "http$1:")).host}/`;
}

/**
 * Chunks that arrive before the reader is attached wait here; afterwards each goes straight to
 * the reader (no queue, no promise per chunk).
 */
export class ChunkRelay {
  private early: Uint8Array[] | undefined = [];
  private reader: ((bytes: Uint8Array) => void) | undefined;

  deliver(bytes: Uint8Array): void {
    if (this.reader) this.reader(bytes);
    else this.early?.push(bytes);
  }

  attach(reader: (bytes: Uint8Array) => void): void {
    if (this.reader) throw new Error("a stream session has one reader");
    this.reader = reader;
    const early = this.early ?? [];
    this.early = undefined;
    for (const bytes of early) reader(bytes);
  }
}
