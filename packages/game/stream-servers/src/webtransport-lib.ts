// The one place that knows how @fails-components/webtransport 1.6.8 is built inside.
//
// - Loading: the library tries its optional native HTTP/3 package on import. Without it, the
//   unpatched library prints "Problem loading http3-quiche transport" on the console; the
//   project's patch (patches/) sends those lines to the library's own debug logger, so nothing
//   needs to be silenced here.
// - The TLS servers: the library gives no access to the Node TLS server(s) it listens with, and the
//   stream server needs them to time out connections that never ask for a session (see
//   createStreamServer). `tlsServersOf` reads them from the library's private fields and throws
//   when they are not where 1.6.8 keeps them, so an upgrade of the library that moves them fails
//   loudly (packages/game/stream-servers/test/webtransport-lib.test.ts) instead of silently dropping the timeout.
type WebTransportLib = typeof import("@fails-components/webtransport");

let loading: Promise<{ lib: WebTransportLib; http3: boolean }> | undefined;

/** The library, loaded once, and whether its native HTTP/3 transport is installed. */
export function loadWebTransport(): Promise<{ lib: WebTransportLib; http3: boolean }> {
  loading ??= (async () => {
    let http3 = false;
    try {
      await import("@fails-components/webtransport-transport-http3-quiche" as string);
      http3 = true;
    } catch {
      http3 = false;
    }
    const lib = await import("@fails-components/webtransport");
    await lib.quicheLoaded;
    return { lib, http3 };
  })();
  return loading;
}

/** What a TLS server of the library is used for here: its "connection" events. */
export type TlsServer = import("node:events").EventEmitter;

interface PrivateTransport {
  serverInt?: TlsServer;
  transportsInts?: Set<{ serverInt?: TlsServer }>;
}

/** The Node TLS server(s) a started server of the library listens with (HTTP/2 and its WebSocket mapping). */
export function tlsServersOf(server: object): TlsServer[] {
  const transport = (server as unknown as { transportInt?: PrivateTransport }).transportInt;
  const servers = transport === undefined ? [] : transport.serverInt ? [transport.serverInt] : [...(transport.transportsInts ?? [])].map((t) => t.serverInt);
  const found = servers.filter((s): s is TlsServer => s !== undefined && typeof s.on === "function");
  if (found.length === 0) {
    throw new Error("@fails-components/webtransport: no TLS server found at transportInt.serverInt (the library's internals changed; see webtransport-lib.ts)");
  }
  return found;
}
