import type { WebTransportBidirectionalStream, WebTransportCloseInfo, WebTransportPolyfill } from "@fails-components/webtransport";

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
 * `<base>?gameId=<id>&ticket=<stream ticket>` (other query parameters of `base` are kept). The
 * ticket comes with StartGame; the player's token never goes into a stream URL.
 */
export function streamUrl(base: string, gameId: string, ticket: string): string {
  const url = new URL(base);
  url.searchParams.set("gameId", gameId);
  url.searchParams.set("ticket", ticket);
  return url.toString();
}

/** The page a player opens once to accept the stream server's self-signed certificate. */
export function certificatePageUrl(streamBase: string): string {
  const url = new URL(streamBase);
  return `https://${url.host}/`;
}

/** The session could not be opened (TLS, connection refused, or rejected before it was ready). */
export class StreamOpenError extends Error {
  override readonly name = "StreamOpenError";
  constructor(
    message: string,
    /** "game" or "music". */
    readonly stream: string,
    /** Where the player can accept the certificate (none for a plain `ws://` link). */
    readonly certificateUrl?: string,
  ) {
    super(message);
  }
}

export interface SessionEndInfo {
  readonly code: number;
  readonly reason: string;
  /** True when the session ended because of a transport error rather than a close. */
  readonly failed: boolean;
}

/** One open WebTransport session with its single bidirectional stream. */
export interface OpenStream {
  readonly kind: string;
  readonly stream: WebTransportBidirectionalStream;
  /** "native" or "websocket". */
  readonly via: string;
  /** Resolves when the session ends, however it ends (never rejects). */
  readonly ended: Promise<SessionEndInfo>;
  close(code?: number, reason?: string): void;
}

const OPEN_TIMEOUT_MS = 10_000;

/** Opens a session at `url`, waits until it is ready and opens its bidirectional stream. */
export async function openStream(kind: string, url: string, allowNative: boolean): Promise<OpenStream> {
  const { WebTransportPolyfill } = await loadWebTransport(allowNative);
  const certUrl = certificatePageUrl(url);
  let transport: WebTransportPolyfill;
  try {
    transport = new WebTransportPolyfill(url);
  } catch (err) {
    throw new StreamOpenError(`${kind} stream: ${(err as Error).message}`, kind, certUrl);
  }
  const ended: Promise<SessionEndInfo> = transport.closed.then(
    (info: WebTransportCloseInfo | undefined) => ({ code: info?.closeCode ?? 0, reason: info?.reason ?? "", failed: false }),
    (err: unknown) => ({ code: -1, reason: err instanceof Error ? err.message : String(err), failed: true }),
  );
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
    const end = await Promise.race([ended, new Promise<undefined>((r) => setTimeout(() => r(undefined), 50))]);
    if (end && !end.failed && end.code !== 0) {
      throw new StreamOpenError(`${kind} stream closed: ${end.code} ${end.reason}`, kind, certUrl);
    }
    throw new StreamOpenError(`${kind} stream could not be opened: ${(err as Error).message}`, kind, certUrl);
  } finally {
    clearTimeout(timer);
  }
  let stream: WebTransportBidirectionalStream;
  try {
    stream = await transport.createBidirectionalStream();
  } catch (err) {
    safeClose(transport);
    const end = await Promise.race([ended, new Promise<undefined>((r) => setTimeout(() => r(undefined), 50))]);
    const why = end && end.code !== 0 && !end.failed ? `${end.code} ${end.reason}` : (err as Error).message;
    throw new StreamOpenError(`${kind} stream: cannot open a bidirectional stream: ${why}`, kind, certUrl);
  }
  return {
    kind,
    stream,
    via: transport.curtype,
    ended,
    close: (code = 0, reason = "") => safeClose(transport, code, reason),
  };
}

function safeClose(transport: WebTransportPolyfill, closeCode = 0, reason = ""): void {
  try {
    transport.close({ closeCode, reason });
  } catch {
    // Already closed.
  }
}
