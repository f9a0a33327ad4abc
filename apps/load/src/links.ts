// How a bot reaches the deployment from its own loopback source address: Connect calls with
// connect-node's `localAddress`, the WebSocket link with ws's `localAddress` (game-client's
// wsConnector binds none), and WebTransport through game-client's Node client, which cannot bind
// one (every WebTransport session comes from the default address).
import { createHash } from "node:crypto";
import { connect as tlsConnect } from "node:tls";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ChunkRelay, type Connector, nodeWebTransportConnector, type SessionEnd, StreamOpenError, type StreamConnection, webSocketEnd } from "@flaplab/game-client/node";
import type { StreamLink } from "@flaplab/game-client";
import { WebSocket } from "ws";

const OPEN_TIMEOUT_MS = 10_000;
const FIRST = 2;
const LAST = 254;

/** The loopback source address of bot `index`: 127.0.0.2 … 127.0.0.254, then round again. */
export function sourceAddress(index: number): string {
  return `127.0.0.${FIRST + (index % (LAST - FIRST + 1))}`;
}

/** Connect (binary, HTTP/1.1) to `baseUrl`, from `localAddress` when given. */
export function connectTransport(baseUrl: string, localAddress: string | undefined): Transport {
  return createConnectTransport({ baseUrl, httpVersion: "1.1", ...(localAddress ? { nodeOptions: { localAddress } } : {}) });
}

/** The WebSocket link from `localAddress`: one binary message per chunk, the HTTP status of a refused upgrade in the error. */
export function boundWsConnector(localAddress: string | undefined): Connector {
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

/**
 * SHA-256 of the certificate the TLS server at `origin` (https://host:port) presents: what
 * WebTransport's `serverCertificateHashes` pins. Read without verifying it, as a browser's
 * "accept this certificate" does; pass --cert-sha256 to pin a known one instead.
 */
export function probeCertificateSha256(origin: string, timeoutMs = 5000): Promise<Uint8Array> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port || 443), servername: url.hostname === "127.0.0.1" ? undefined : url.hostname, rejectUnauthorized: false, ALPNProtocols: ["h2"] });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TLS answer from ${url.host} within ${timeoutMs} ms to read its certificate; pass --cert-sha256`));
    }, timeoutMs);
    socket.once("secureConnect", () => {
      clearTimeout(timer);
      const cert = socket.getPeerCertificate();
      socket.destroy();
      if (!cert?.raw) return reject(new Error(`the stream server at ${url.host} presented no certificate; pass --cert-sha256`));
      resolve(Uint8Array.from(createHash("sha256").update(cert.raw).digest()));
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot read the certificate of the stream server at ${url.host}: ${err.message}; pass --cert-sha256`));
    });
  });
}

/** WebTransport pinned to `certSha256`, or to each stream server's own certificate, read once per origin. */
export function webTransportLink(certSha256: Uint8Array | undefined): Connector {
  if (certSha256) return nodeWebTransportConnector(certSha256);
  const byOrigin = new Map<string, Promise<Connector>>();
  return async (kind, url) => {
    const origin = new URL(url).origin;
    let connector = byOrigin.get(origin);
    if (!connector) {
      connector = probeCertificateSha256(origin).then((hash) => nodeWebTransportConnector(hash));
      byOrigin.set(origin, connector);
      connector.catch(() => byOrigin.delete(origin));
    }
    let c: Connector;
    try {
      c = await connector;
    } catch (err) {
      throw new StreamOpenError(`${kind} stream could not be opened: ${(err as Error).message}`, kind);
    }
    return c(kind, url);
  };
}

/** A bot's stream connector on `link`, from `localAddress` where the link can bind one. */
export function botConnector(link: StreamLink, localAddress: string | undefined, webTransport: Connector | undefined): Connector {
  if (link === "websocket") return boundWsConnector(localAddress);
  if (!webTransport) throw new Error("the WebTransport link needs its connector");
  return webTransport;
}
