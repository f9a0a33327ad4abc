import type { Principal } from "@flaplab/component";
import type { ChunkReader } from "./inbox.js";

/** How a stream session ended. */
export interface SessionEnd {
  readonly code: number;
  readonly reason: string;
  /** Who ended it. "transport" when the connection broke. */
  readonly by: "server" | "client" | "transport";
}

/**
 * One client's stream for one game, as a component handler sees it: already authenticated, with
 * the transport (WebTransport over HTTP/3, HTTP/2 or WebSocket) hidden.
 */
export interface StreamSession {
  readonly gameId: string;
  readonly principal: Principal;
  /** "engine" or "music": which stream this is. */
  readonly kind: string;
  /**
   * Starts reading the client's bytes: `reader.onChunk` gets each chunk as it arrives (not yet
   * split into messages), in the transport's own callback; `reader.onEnd` comes once, last, when
   * the client stops or the session closes. A session has one reader (`chunksOf(session)` makes
   * it an async iterable).
   */
  read(reader: ChunkReader): void;
  /**
   * Queues bytes to the client; the transport keeps `bytes`, so they must not change afterwards.
   * Returns false when the session is already closed; never throws.
   */
  send(bytes: Uint8Array): boolean;
  /**
   * Queues `source[start, end)` to the client. The transport copies what it keeps before it
   * returns, so the caller may overwrite `source` at once: how the engine sends every frame from
   * its one reused `FrameWriter` without allocating. Returns false when the session is already
   * closed; never throws.
   */
  sendFrom(source: Uint8Array, start: number, end: number): boolean;
  /** Bytes queued and not yet accepted by the transport. */
  readonly bufferedBytes: number;
  /** Ends the session: the client sees `code` and `reason`. Later calls do nothing. */
  close(code: number, reason: string): void;
  readonly closed: Promise<SessionEnd>;
}

/** A component's handler for new sessions on its stream path. */
export type SessionHandler = (session: StreamSession) => void;
