// The Node entry: everything of the browser-safe entry, and Node's transports — the ws package
// for the plain WebSocket link, @fails-components/webtransport's Node client for WebTransport,
// connect-node for the calls.
import { createConnectTransport } from "@connectrpc/connect-node";
import type { Transport } from "@connectrpc/connect";
import type { Connector } from "./connection.js";
import type { StreamLink } from "./game-stream.js";
import { webTransportConnector, type WebTransportSession } from "./webtransport-connector.js";
import { wsConnector } from "./ws-connector.js";

export * from "./index.js";
export { type WsConnectorOptions, wsConnector } from "./ws-connector.js";

type WebTransportLib = typeof import("@fails-components/webtransport");
let library: Promise<WebTransportLib> | undefined;

/** The WebTransport library, loaded once. */
function loadLibrary(): Promise<WebTransportLib> {
  library ??= (async () => {
    const lib = await import("@fails-components/webtransport");
    await lib.quicheLoaded;
    return lib;
  })();
  return library;
}

/**
 * WebTransport over the library's Node client (its HTTP/2 mapping), trusting the stream server's
 * certificate by its SHA-256 hash.
 */
export function nodeWebTransportConnector(certSha256: Uint8Array): Connector {
  let connector: Connector | undefined;
  return async (kind, url) => {
    const lib = await loadLibrary();
    connector ??= webTransportConnector(
      (u) =>
        new lib.WebTransport(u, {
          forceReliable: true,
          serverCertificateHashes: [{ algorithm: "sha-256", value: certSha256 }],
        } as never) as unknown as WebTransportSession,
      () => "webtransport (http/2)",
    );
    return connector(kind, url);
  };
}

/** The connector of a link: ws for "websocket", the WebTransport client (with the certificate's hash) otherwise. */
export function nodeConnector(link: StreamLink, certSha256?: Uint8Array): Connector {
  if (link === "websocket") return wsConnector();
  if (!certSha256) throw new Error("a WebTransport link needs the stream server's certificate hash (certSha256)");
  return nodeWebTransportConnector(certSha256);
}

/** A Connect transport (binary, HTTP/1.1) to a component's base URL. */
export function nodeConnectTransport(baseUrl: string, options: { readonly localAddress?: string } = {}): Transport {
  const { localAddress } = options;
  return createConnectTransport({ baseUrl, httpVersion: "1.1", ...(localAddress ? { nodeOptions: { localAddress } } : {}) });
}
