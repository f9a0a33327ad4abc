// The plain WebSocket link in Node, with the ws package: one binary message per chunk, no
// per-message deflate, and the HTTP status of a refused upgrade in the error.
import { WebSocket } from "ws";
import { ChunkRelay, type Connector, type SessionEnd, StreamOpenError, type StreamConnection } from "./connection.js";
import { webSocketEnd } from "./websocket-connector.js";

const OPEN_TIMEOUT_MS = 10_000;

/** What a Node WebSocket session may be opened with. */
export interface WsConnectorOptions {
  /** The local (source) address to connect from, e.g. one loopback address per load bot. */
  readonly localAddress?: string;
}

/** Opens one session; rejects with StreamOpenError (with the HTTP status when the upgrade was refused). */
export function wsConnector(options: WsConnectorOptions = {}): Connector {
  const { localAddress } = options;
  return (kind, url) =>
    new Promise<StreamConnection>((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, ...(localAddress ? { localAddress } : {}) });
      const relay = new ChunkRelay();
      let resolveEnd!: (end: SessionEnd) => void;
      const ended = new Promise<SessionEnd>((r) => (resolveEnd = r));
      let lastError = "";
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new StreamOpenError(`${kind} stream could not be opened: not open after ${OPEN_TIMEOUT_MS} ms`, kind));
      }, OPEN_TIMEOUT_MS);
      ws.on("unexpected-response", (_req, res) => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        reject(new StreamOpenError(`${kind} stream refused: HTTP ${status} ${res.statusMessage ?? ""}`.trim(), kind, undefined, status));
        res.resume();
        ws.terminate();
      });
      ws.on("error", (err) => {
        lastError = err.message;
        clearTimeout(timer);
        reject(new StreamOpenError(`${kind} stream could not be opened: ${err.message}`, kind));
      });
      ws.on("message", (data: Buffer) => relay.deliver(data));
      ws.on("close", (code, reason) => {
        clearTimeout(timer);
        const end = webSocketEnd(code, reason.toString());
        resolveEnd(end.failed && lastError !== "" && end.reason === "" ? { ...end, reason: lastError } : end);
      });
      ws.once("open", () => {
        clearTimeout(timer);
        resolve({
          via: "plain websocket",
          ended,
          read: (onChunk) => relay.attach(onChunk),
          send: (bytes) => {
            if (ws.readyState !== WebSocket.OPEN) return false;
            ws.send(bytes);
            return true;
          },
          close: (code = 0, reason = "") => {
            if (ws.readyState === WebSocket.CLOSED) return;
            try {
              ws.close(code === 0 ? 1000 : code, reason);
            } catch {
              ws.terminate();
            }
          },
        });
      });
    });
}
