import type { WebTransportPolyfill } from "@fails-components/webtransport";
import { type Connector, type WebTransportSession, webTransportConnector } from "@flaplab/game-client";

type WebTransportModule = typeof import("@fails-components/webtransport");

let modulePromise: Promise<WebTransportModule> | undefined;

/**
 * Loads @fails-components/webtransport (browser entry) on first use.
 *
 * On import that entry probes `new WebTransport("https://example.com:23333/test")` whenever
 * `window.WebTransport` exists, which would contact an outside host. Unless the stream servers
 * offer HTTP/3 (`allowNative`), the native constructor is hidden while the module evaluates: the
 * probe is skipped, the library records that native WebTransport is unavailable, and
 * `WebTransportPolyfill` goes straight to the WebSocket mapping. The constructor is put back
 * afterwards. The choice holds for the page's lifetime (the module is evaluated once).
 */
export function loadWebTransport(allowNative: boolean): Promise<WebTransportModule> {
  modulePromise ??= (async () => {
    const g = globalThis as { WebTransport?: unknown };
    const hide = !allowNative && g.WebTransport !== undefined;
    const own = Object.getOwnPropertyDescriptor(globalThis, "WebTransport");
    if (hide) {
      if (own) delete g.WebTransport;
      else Object.defineProperty(globalThis, "WebTransport", { value: undefined, configurable: true, writable: true });
    }
    try {
      return await import("@fails-components/webtransport");
    } finally {
      if (hide) {
        if (own) Object.defineProperty(globalThis, "WebTransport", own);
        else delete g.WebTransport;
      }
    }
  })();
  return modulePromise;
}

/**
 * The game client's WebTransport link in this page: the polyfill (native HTTP/3 when `allowNative`
 * and the browser has it, else the WebSocket mapping); `via` is the one it took.
 */
export function pageWebTransportConnector(allowNative: boolean): Connector {
  let connector: Connector | undefined;
  return async (kind, url) => {
    if (!connector) {
      const { WebTransportPolyfill } = await loadWebTransport(allowNative);
      connector = webTransportConnector(
        (u) => new WebTransportPolyfill(u) as unknown as WebTransportSession,
        (session) => (session as unknown as WebTransportPolyfill).curtype,
      );
    }
    return connector(kind, url);
  };
}
