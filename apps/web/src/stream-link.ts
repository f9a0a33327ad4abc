import type { WebTransportBidirectionalStream } from "@fails-components/webtransport";
import { type OpenStream, type SessionEndInfo, StreamOpenError, certificatePageUrl } from "./webtransport.js";

/** How the page reaches the game's streams: WebTransport (the default) or plain WebSocket. */
export type StreamLink = "webtransport" | "websocket";

export const STREAM_LINKS: readonly StreamLink[] = ["webtransport", "websocket"];

/**
 * `?link=webtransport|websocket` from a query string: undefined when absent; an unknown value is
 * an error the page shows (a run on the wrong link must not pass for a run on the right one).
 */
export function linkFromUrl(search: string): StreamLink | undefined {
  const raw = new URLSearchParams(search).get("link");
  if (raw === null) return undefined;
  if ((STREAM_LINKS as readonly string[]).includes(raw)) return raw as StreamLink;
  throw new Error(`unknown stream link "${raw}" in the page URL: use link=${STREAM_LINKS.join(" or link=")}`);
}

const OPEN_TIMEOUT_MS = 10_000;

/** A `wss://` server may have a certificate to accept; a `ws://` one has none. */
function certificateUrlOf(url: string): string | undefined {
  return url.startsWith("wss:") ? certificatePageUrl(url.replace(/^wss:/, "https:")) : undefined;
}

/**
 * Opens a plain WebSocket stream session at `url` (`ws://` or `wss://`) and presents it as the
 * WebTransport session's single bidirectional stream, so the game reads and writes it the same
 * way. Each binary message is one chunk of the stream. Close codes: 1000 (and 1005) are the
 * normal end, 0; 4xxx are the session's own codes; 1006, a connection lost without a close, is
 * a failure.
 */
export async function openWebSocketStream(kind: string, url: string): Promise<OpenStream> {
  const httpUrl = url.replace(/^ws(s?):/, "http$1:");
  let ws: WebSocket;
  try {
    ws = new WebSocket(url);
  } catch (err) {
    throw new StreamOpenError(`${kind} stream: ${(err as Error).message}`, kind, certificateUrlOf(url));
  }
  ws.binaryType = "arraybuffer";
  let endInfo: ((info: SessionEndInfo) => void) | undefined;
  const ended = new Promise<SessionEndInfo>((resolve) => (endInfo = resolve));
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const readable = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  ws.onmessage = (event: MessageEvent) => {
    if (event.data instanceof ArrayBuffer) controller?.enqueue(new Uint8Array(event.data));
  };
  ws.onclose = (event: CloseEvent) => {
    try {
      controller?.close();
    } catch {
      // Already closed or errored.
    }
    const normal = event.code === 1000 || event.code === 1005;
    endInfo?.({ code: normal ? 0 : event.code, reason: event.reason, failed: event.code === 1006 });
  };
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
      // The browser tells a page no more than this (no status of a refused upgrade).
      reject(new StreamOpenError(`${kind} stream could not be opened: the server refused or is unreachable (${new URL(httpUrl).host})`, kind, certificateUrlOf(url)));
    };
  });
  ws.onerror = null;
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      if (ws.readyState !== WebSocket.OPEN) throw new Error(`${kind} stream is closed`);
      ws.send(chunk);
    },
  });
  const stream = { readable, writable } as unknown as WebTransportBidirectionalStream;
  return {
    kind,
    stream,
    via: "plain websocket",
    ended,
    close: (code = 0, reason = "") => {
      try {
        ws.close(code === 0 ? 1000 : code, reason);
      } catch {
        ws.close();
      }
    },
  };
}
