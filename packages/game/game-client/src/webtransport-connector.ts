// The WebTransport link over any WebTransport implementation: a browser's own (or the
// @fails-components polyfill a page loads), or the library's Node client (./node).
import { type Connector, certificatePageUrl, type SessionEnd, StreamOpenError, type StreamConnection, ChunkRelay } from "./connection.js";

const OPEN_TIMEOUT_MS = 10_000;

/** The part of a WebTransport session this connector uses. */
export interface WebTransportSession {
  readonly ready: Promise<unknown>;
  readonly closed: Promise<{ closeCode?: number; reason?: string } | undefined>;
  close(info?: { closeCode?: number; reason?: string }): void;
  createBidirectionalStream(): Promise<{ readonly readable: ReadableStream<Uint8Array>; readonly writable: WritableStream<Uint8Array> }>;
}

/** Opens game and music sessions over WebTransport, each with one bidirectional stream. */
export function webTransportConnector(create: (url: string) => WebTransportSession, via: (session: WebTransportSession) => string = () => "webtransport"): Connector {
  return async (kind, url) => {
    const certUrl = certificatePageUrl(url);
    let transport: WebTransportSession;
    try {
      transport = create(url);
    } catch (err) {
      throw new StreamOpenError(`${kind} stream: ${(err as Error).message}`, kind, certUrl);
    }
    const ended: Promise<SessionEnd> = transport.closed.then(
      (info) => ({ code: info?.closeCode ?? 0, reason: info?.reason ?? "", failed: false }),
      (err: unknown) => {
        const info = err as { closeCode?: number; reason?: string } | undefined;
        // Some implementations reject `closed` with the close info of a session the server closed.
        if (typeof info?.closeCode === "number" && info.closeCode !== 0) return { code: info.closeCode, reason: info.reason ?? "", failed: false };
        return { code: -1, reason: err instanceof Error ? err.message : String(err), failed: true };
      },
    );
    const closedWith = async (): Promise<SessionEnd | undefined> =>
      Promise.race([ended, new Promise<undefined>((r) => setTimeout(() => r(undefined), 50))]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        transport.ready,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`not ready after ${OPEN_TIMEOUT_MS} ms`)), OPEN_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      safeClose(transport);
      // A session the server closed right after accepting it carries a code and reason.
      const end = await closedWith();
      if (end && !end.failed && end.code !== 0) throw new StreamOpenError(`${kind} stream closed: ${end.code} ${end.reason}`, kind, certUrl);
      throw new StreamOpenError(`${kind} stream could not be opened: ${(err as Error)?.message ?? String(err)}`, kind, certUrl);
    } finally {
      clearTimeout(timer);
    }
    let stream: Awaited<ReturnType<WebTransportSession["createBidirectionalStream"]>>;
    try {
      stream = await transport.createBidirectionalStream();
    } catch (err) {
      safeClose(transport);
      const end = await closedWith();
      const why = end && end.code !== 0 && !end.failed ? `${end.code} ${end.reason}` : (err as Error).message;
      throw new StreamOpenError(`${kind} stream: cannot open a bidirectional stream: ${why}`, kind, certUrl);
    }
    const writer = stream.writable.getWriter();
    const relay = new ChunkRelay();
    let open = true;
    void ended.then(() => (open = false));
    void pump(stream.readable, relay);
    const connection: StreamConnection = {
      via: via(transport),
      ended,
      read: (onChunk) => relay.attach(onChunk),
      send: (bytes) => {
        if (!open) return false;
        writer.write(bytes).catch(() => undefined);
        return true;
      },
      close: (code = 0, reason = "") => {
        open = false;
        safeClose(transport, code, reason);
      },
    };
    return connection;
  };
}

async function pump(readable: ReadableStream<Uint8Array>, relay: ChunkRelay): Promise<void> {
  const reader = readable.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      relay.deliver(value);
    }
  } catch {
    // The session ended: `ended` says how.
  } finally {
    reader.releaseLock();
  }
}

function safeClose(transport: WebTransportSession, closeCode = 0, reason = ""): void {
  try {
    transport.close({ closeCode, reason });
  } catch {
    // Already closed.
  }
}
