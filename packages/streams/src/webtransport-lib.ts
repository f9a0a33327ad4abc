// Loads @fails-components/webtransport quietly. Without the optional native HTTP/3 package the
// library prints "Problem loading http3-quiche transport" and "http3 loader: …" on import; that is
// expected here (the HTTP/2 + WebSocket transport needs no native code), so those lines are dropped.
type WebTransportLib = typeof import("@fails-components/webtransport");

let loading: Promise<{ lib: WebTransportLib; http3: boolean }> | undefined;

const QUICHE_NOISE = /http3[- ]quiche|http3 loader|webtransport-transport-http3-quiche/i;

export function loadWebTransport(): Promise<{ lib: WebTransportLib; http3: boolean }> {
  loading ??= (async () => {
    const original = { log: console.log, error: console.error };
    const filter = (write: (...args: unknown[]) => void) => (...args: unknown[]) => {
      if (args.some((a) => QUICHE_NOISE.test(String(a)))) return;
      write(...args);
    };
    console.log = filter(original.log);
    console.error = filter(original.error);
    try {
      let http3 = false;
      try {
        await import("@fails-components/webtransport-transport-http3-quiche" as string);
        http3 = true;
      } catch {
        http3 = false;
      }
      const lib = await import("@fails-components/webtransport");
      await lib.quicheLoaded;
      await new Promise((r) => setTimeout(r, 10)); // the library's second loader settles a moment later
      return { lib, http3 };
    } finally {
      console.log = original.log;
      console.error = original.error;
    }
  })();
  return loading;
}
