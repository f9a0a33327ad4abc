import { randomBytes } from "node:crypto";
import type { TLSSocket } from "node:tls";
import { ConnectError } from "@connectrpc/connect";
import type { Principal } from "@flaplab/component";
import { CloseCode, type SessionEnd, type SessionHandler, type StreamSession } from "@flaplab/game-stream";
import type { Logger } from "pino";
import type { StreamCertificate } from "./certificate.js";
import { loadWebTransport } from "./webtransport-lib.js";

/** Checks a bearer token; throws (ConnectError Unauthenticated) when it is not valid. */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}

export interface StreamRoute {
  /** "engine" or "music". */
  readonly kind: string;
  readonly handler: SessionHandler;
}

export interface StreamServerOptions {
  readonly host: string;
  /** 0 for any free port. */
  readonly port: number;
  readonly certificate: StreamCertificate;
  /** URL path → route, e.g. "/engine/v1/game". */
  readonly routes: Readonly<Record<string, StreamRoute>>;
  readonly verifier: TokenVerifier;
  readonly logger: Logger;
  /** How long a client has to open its stream after the session is up (default 10 s). */
  readonly streamOpenTimeoutMs?: number;
}

export interface StreamServer {
  readonly port: number;
  /** "http2+websocket", or "http3+http2+websocket" when the native HTTP/3 package is installed. */
  readonly transports: string;
  readonly certificate: StreamCertificate;
  /** Sessions open now. */
  readonly openSessions: number;
  close(): Promise<void>;
}

interface WtBidiStream {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
}

interface WtSession {
  ready: Promise<unknown>;
  closed: Promise<{ closeCode?: number; reason?: string } | undefined>;
  incomingBidirectionalStreams: ReadableStream<WtBidiStream>;
  close(info?: { closeCode: number; reason: string }): void;
  userData?: { search?: string };
}

/**
 * The WebTransport server of one process: sessions on each route are authenticated from their
 * `token` query parameter, given their `gameId`, and handed to the route's handler as a
 * StreamSession once the client has opened its bidirectional stream. Problems close the session
 * with a CloseCode and a reason the client can show.
 */
export async function createStreamServer(opts: StreamServerOptions): Promise<StreamServer> {
  const { lib, http3 } = await loadWebTransport();
  const { logger, routes } = opts;
  const args = {
    port: opts.port,
    host: opts.host,
    secret: randomBytes(16).toString("hex"),
    cert: opts.certificate.cert,
    privKey: opts.certificate.key,
  };
  const server = http3 ? new lib.HttpServer({ ...args, reliability: "both" } as never) : new lib.Http2Server(args as never);
  const sessions = new Set<WtSession>();

  server.setRequestCallback(async ({ header }: { header: Record<string, string> }) => {
    const url = new URL(header[":path"] ?? "/", "https://stream.invalid");
    if (!(url.pathname in routes)) return { status: 404 };
    return { status: 200, path: url.pathname, userData: { search: url.search } };
  });
  for (const [path, route] of Object.entries(routes)) {
    void acceptLoop(server.sessionStream(path) as ReadableStream<WtSession>, route);
  }

  server.startServer();
  await server.ready;
  // The WebSocket mapping is latency-sensitive: without this Nagle adds ~40 ms per round trip.
  const tlsServer = (server as unknown as { transportInt: { serverInt?: NodeTlsServer; transportsInts?: Set<{ serverInt?: NodeTlsServer }> } }).transportInt;
  for (const s of tlsServer.serverInt ? [tlsServer.serverInt] : [...(tlsServer.transportsInts ?? [])].map((t) => t.serverInt)) {
    s?.on("secureConnection", (socket: TLSSocket) => socket.setNoDelay(true));
  }
  const address = server.address();
  if (!address) throw new Error("stream server did not start");
  logger.info({ event: "streams-listening", port: address.port, routes: Object.keys(routes), http3 }, "stream server listening");

  async function acceptLoop(stream: ReadableStream<WtSession>, route: StreamRoute): Promise<void> {
    const reader = stream.getReader();
    for (;;) {
      const { value: session, done } = await reader.read();
      if (done) return;
      sessions.add(session);
      session.closed.catch(() => undefined).finally(() => sessions.delete(session));
      void admit(session, route).catch((err: unknown) => {
        logger.error({ err, kind: route.kind }, "stream session failed");
        safeClose(session, CloseCode.Internal, "internal error");
      });
    }
  }

  async function admit(wt: WtSession, route: StreamRoute): Promise<void> {
    await wt.ready;
    const params = new URLSearchParams(wt.userData?.search ?? "");
    const gameId = params.get("gameId") ?? "";
    const token = params.get("token") ?? "";
    if (gameId === "") return safeClose(wt, CloseCode.Malformed, "missing gameId query parameter");
    let principal: Principal;
    try {
      if (token === "") throw new Error("missing token query parameter");
      principal = await opts.verifier.verify(token);
    } catch (err) {
      const reason = err instanceof ConnectError ? err.rawMessage : (err as Error).message;
      logger.info({ event: "stream-rejected", kind: route.kind, gameId, reason }, "stream rejected");
      return safeClose(wt, CloseCode.Unauthenticated, reason);
    }
    const streams = wt.incomingBidirectionalStreams.getReader();
    const first = await Promise.race([
      streams.read(),
      wt.closed.then(() => undefined, () => undefined),
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), opts.streamOpenTimeoutMs ?? 10_000).unref()),
    ]);
    if (first === undefined) return; // client went away
    if (first === "timeout") return safeClose(wt, CloseCode.Malformed, "no stream opened");
    if (first.done) return;
    streams.releaseLock();
    route.handler(adapt(wt, first.value, route.kind, gameId, principal));
  }

  return {
    get port() {
      return address.port;
    },
    transports: http3 ? "http3+http2+websocket" : "http2+websocket",
    certificate: opts.certificate,
    get openSessions() {
      return sessions.size;
    },
    async close() {
      for (const s of sessions) safeClose(s, CloseCode.Internal, "server shutting down");
      server.stopServer();
      await Promise.race([server.closed, new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}

type NodeTlsServer = import("node:events").EventEmitter;

function safeClose(wt: WtSession, code: number, reason: string): void {
  try {
    wt.close({ closeCode: code, reason });
  } catch {
    // already closed
  }
}

/** The transport-free view of a session that component handlers work with. */
function adapt(wt: WtSession, bidi: WtBidiStream, kind: string, gameId: string, principal: Principal): StreamSession {
  const writer = bidi.writable.getWriter();
  let buffered = 0;
  let ended: SessionEnd | undefined;
  let resolveClosed!: (end: SessionEnd) => void;
  const closed = new Promise<SessionEnd>((r) => (resolveClosed = r));
  const finish = (end: SessionEnd): void => {
    if (ended) return;
    ended = end;
    resolveClosed(end);
  };
  wt.closed.then(
    (info) => finish({ code: info?.closeCode ?? 0, reason: info?.reason ?? "", by: "client" }),
    (err: unknown) => finish({ code: CloseCode.Internal, reason: String((err as Error)?.message ?? err), by: "transport" }),
  );
  async function* incoming(): AsyncIterable<Uint8Array> {
    const reader = bidi.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || ended) return;
        if (value && value.byteLength > 0) yield value;
      }
    } catch {
      return; // the transport broke; `closed` says how
    } finally {
      reader.releaseLock();
    }
  }
  return {
    gameId,
    principal,
    kind,
    incoming: incoming(),
    send(bytes) {
      if (ended) return false;
      buffered += bytes.byteLength;
      writer.write(bytes).then(
        () => (buffered -= bytes.byteLength),
        () => (buffered -= bytes.byteLength),
      );
      return true;
    },
    get bufferedBytes() {
      return buffered;
    },
    close(code, reason) {
      if (ended) return;
      finish({ code, reason, by: "server" });
      void writer.close().catch(() => undefined).finally(() => safeClose(wt, code, reason));
    },
    closed,
  };
}
