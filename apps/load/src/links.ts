// How a bot reaches the deployment from its own loopback source address: Connect calls and the
// WebSocket link through game-client's Node entry, bound to that address, and WebTransport through
// game-client's Node client, which cannot bind one (every WebTransport session comes from the
// default address).
import { createHash } from "node:crypto";
import { connect as tlsConnect } from "node:tls";
import type { Transport } from "@connectrpc/connect";
import { type Connector, nodeConnectTransport, nodeWebTransportConnector, StreamOpenError, wsConnector } from "@flaplab/game-client/node";
import type { StreamLink } from "@flaplab/game-client";

const FIRST = 2;
const LAST = 254;

/** The loopback source address of bot `index`: 127.0.0.2 … 127.0.0.254, then round again. */
export function sourceAddress(index: number): string {
  return `127.0.0.${FIRST + (index % (LAST - FIRST + 1))}`;
}

/** Connect (binary, HTTP/1.1) to `baseUrl`, from `localAddress` when given. */
export function connectTransport(baseUrl: string, localAddress: string | undefined): Transport {
  return nodeConnectTransport(baseUrl, localAddress ? { localAddress } : {});
}

/** The WebSocket link from `localAddress` when given. */
export function boundWsConnector(localAddress: string | undefined): Connector {
  return wsConnector(localAddress ? { localAddress } : {});
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
