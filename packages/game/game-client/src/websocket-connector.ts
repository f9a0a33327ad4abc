// The plain WebSocket link over a WHATWG WebSocket (a browser's own). In Node, `wsConnector`
// (./node) uses the ws package directly.
import { ChunkRelay, type Connector, certificatePageUrl, type SessionEnd, StreamOpenError, type StreamConnection } from "./connection.js";

const OPEN_TIMEOUT_MS = 10_000;

/** An event handler property, checked as a method is (a browser's handlers take its own event types). */
type Handler<E> = { bivariant(event: E): void }["bivariant"] | null;

/** The part of a WHATWG WebSocket this connector uses. */
export interface WhatwgWebSocket {
  binaryType: string;
  readonly readyState: number;
  onopen: Handler<unknown>;
  onmessage: Handler<{ data: unknown }>;
  onclose: Handler<{ code: number; reason: string }>;
  onerror: Handler<unknown>;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

const OPEN = 1;

/** A `wss://` server may have a certificate to accept; a `ws://` one has none. */
function certificateUrlOf(url: string): string | undefined {
  return url.startsWith("wss:") ? certificatePageUrl(url) : undefined;
}

/** WebSocket close codes as session ends: 1000 and 1005 are a normal end (0); 1006 is a failure. */
export function webSocketEnd(code: number, reason: string): SessionEnd {
  const normal = code === 1000 || code === 1005;
  return { code: normal ? 0 : code, reason, failed: code === 1006 };
}

/**
 * Opens game and music sessions over plain WebSocket (`ws://` or `wss://`), one binary message per
 * chunk, with `create(url)` (in a browser: `(url) => new WebSocket(url)`).
 */
export function whatwgWebSocketConnector(create: (url: string) => WhatwgWebSocket): Connector {
  return async (kind, url) => {
    let ws: WhatwgWebSocket;
    try {
      ws = create(url);
    } catch (err) {
      throw new StreamOpenError(`${kind} stream: ${(err as Error).message}`, kind, certificateUrlOf(url));
    }
    ws.binaryType = "arraybuffer";
    const relay = new ChunkRelay();
    let resolveEnd!: (end: SessionEnd) => void;
    const ended = new Promise<SessionEnd>((r) => (resolveEnd = r));
    ws.onmessage = (event) => {
      const data = event.data;
      if (data instanceof ArrayBuffer) relay.deliver(new Uint8Array(data));
      else if (data instanceof Uint8Array) relay.deliver(data);
    };
    ws.onclose = (event) => resolveEnd(webSocketEnd(event.code, event.reason));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.close();
        reject(new StreamOpenError(`${kind} stream could not be opened: not open after ${OPEN_TIMEOUT_MS} ms`, kind, certificateUrlOf(url)));
      }, OPEN_TIMEOUT_MS);
      ws.onopen = () => {
        clearTimeout(timer);
        resolve();
      };
      ws.onerror = () => {
        clearTimeout(timer);
        // A browser tells a page no more than this (not the status of a refused upgrade).
        const host = new URL(url.replace(/^ws(s?):/, "http$1:")).host;
        reject(new StreamOpenError(`${kind} stream could not be opened: the server refused or is unreachable (${host})`, kind, certificateUrlOf(url)));
      };
    });
    ws.onerror = null;
    const connection: StreamConnection = {
      via: "plain websocket",
      ended,
      read: (onChunk) => relay.attach(onChunk),
      send: (bytes) => {
        if (ws.readyState !== OPEN) return false;
        ws.send(bytes);
        return true;
      },
      close: (code = 0, reason = "") => {
        try {
          ws.close(code === 0 ? 1000 : code, reason);
        } catch {
          ws.close();
        }
      },
    };
    return connection;
  };
}
