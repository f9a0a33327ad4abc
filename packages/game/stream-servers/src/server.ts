import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Principal } from "@flaplab/component";
import type { TokenVerifier } from "@flaplab/identity";
import { CloseCode, type StreamSession } from "@flaplab/game-protocol";
import type { Logger } from "pino";
import type { StreamCertificate } from "./certificate.js";
import { admitSessionRequest, type LiveSession, runHandler, SessionEnding, type StreamAuthorizer, type StreamRoute, type StreamRoutes, startIdleSweep } from "./admission.js";
import { resolveStreamLimits, type StreamLimits } from "./limits.js";
import { addressOfPeer, SessionShares } from "./shares.js";
import { loadWebTransport, tlsServersOf } from "./webtransport-lib.js";


/** The query parameter a player token is read from by `tokenAuthorizer`. */
export const STREAM_TOKEN_PARAM = "token";

/** Authorizes a session by the player token in its `token` query parameter. */
export function tokenAuthorizer(verifier: TokenVerifier): StreamAuthorizer {
  return async (query) => {
    const token = query.get(STREAM_TOKEN_PARAM) ?? "";
    if (token === "") throw new ConnectError("missing token query parameter", Code.Unauthenticated);
    return verifier.verify(token);
  };
}

export interface StreamServerOptions {
  readonly host: string;
  /** 0 for any free port. */
  readonly port: number;
  readonly certificate: StreamCertificate;
  /** URL path → route, e.g. "/engine/v1/game". */
  readonly routes: StreamRoutes;
  /** Checks the credential of every session request before it is accepted. */
  readonly authorize: StreamAuthorizer;
  readonly logger: Logger;
  /** Timeouts and the session cap; defaults in DEFAULT_STREAM_LIMITS (see streamLimitsFromEnv). */
  readonly limits?: Partial<StreamLimits>;
  /** How long a client has to open its stream after the session is up (same as limits.streamOpenTimeoutMs). */
  readonly streamOpenTimeoutMs?: number;
}

export interface StreamServer {
  readonly port: number;
  /** "http2+websocket", or "http3+http2+websocket" when the native HTTP/3 package is installed. */
  readonly transports: string;
  readonly certificate: StreamCertificate;
  readonly limits: StreamLimits;
  /** Sessions open now. */
  readonly openSessions: number;
  close(): Promise<void>;
}

interface WtBidiStream {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
}

interface SessionData {
  gameId: string;
  principal: Principal;
}

interface WtSession {
  ready: Promise<unknown>;
  closed: Promise<{ closeCode?: number; reason?: string } | undefined>;
  incomingBidirectionalStreams: ReadableStream<WtBidiStream>;
  close(info?: { closeCode: number; reason: string }): void;
  userData?: Partial<SessionData>;
  /** The client's `address:port`. */
  readonly peerAddress?: string;
}

/**
 * The WebTransport server of one process. A session request is authorized (`authorize`, from the
 * URL's query) before it is accepted: unknown paths get 404, a missing `gameId` 400, a refused
 * credential 401/403, a full server 503. Accepted sessions are handed to the route's handler as a
 * StreamSession once the client has opened its bidirectional stream. Problems close only their
 * session, with a CloseCode and a reason the client can show.
 */
export async function createStreamServer(opts: StreamServerOptions): Promise<StreamServer> {
  const { lib, http3 } = await loadWebTransport();
  const { logger, routes } = opts;
  const limits = resolveStreamLimits({
    ...(opts.streamOpenTimeoutMs !== undefined ? { streamOpenTimeoutMs: opts.streamOpenTimeoutMs } : {}),
    ...opts.limits,
  });
  const args = {
    port: opts.port,
    host: opts.host,
    secret: randomBytes(16).toString("hex"),
    cert: opts.certificate.cert,
    privKey: opts.certificate.key,
  };
  const server = http3 ? new lib.HttpServer({ ...args, reliability: "both" } as never) : new lib.Http2Server(args as never);
  const sessions = new Set<WtSession>();
  const live = new Set<LiveSession>();
  const shares = new SessionShares(limits, logger);

  server.setRequestCallback(async ({ header }: { header: Record<string, string> }) => {
    // Never rejects: the library leaves a request unanswered when this promise does.
    const result = await admitSessionRequest(header[":path"] ?? "/", {
      routes,
      authorize: opts.authorize,
      logger,
      maxSessions: limits.maxSessions,
      openSessions: sessions.size,
      link: "webtransport",
    });
    if (!result.admitted) return { status: result.status };
    return { status: 200, path: result.path, userData: { gameId: result.gameId, principal: result.principal } satisfies SessionData };
  });
  for (const [path, route] of Object.entries(routes)) {
    void acceptLoop(server.sessionStream(path) as ReadableStream<WtSession>, route);
  }

  server.startServer();
  await server.ready;
  const tlsServers = tlsServersOf(server);
  // A connection has handshakeTimeoutMs from its first byte on the wire to its first session
  // request (WebSocket upgrade or extended CONNECT); one that never gets there is dropped.
  const handshakeTimers = new Map<string, NodeJS.Timeout>();
  const peerKey = (s: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string => `${s.remoteAddress}:${s.remotePort}`;
  const requested = (s: { remoteAddress?: string | undefined; remotePort?: number | undefined } | undefined): void => {
    if (!s) return;
    const key = peerKey(s);
    clearTimeout(handshakeTimers.get(key));
    handshakeTimers.delete(key);
  };
  for (const s of tlsServers) {
    s.on("connection", (socket: Socket) => {
      const key = peerKey(socket);
      const timer = setTimeout(() => {
        handshakeTimers.delete(key);
        logger.info({ event: "stream-connection-timeout", peer: key, timeoutMs: limits.handshakeTimeoutMs }, "stream connection asked for no session in time");
        socket.destroy();
      }, limits.handshakeTimeoutMs);
      timer.unref();
      handshakeTimers.set(key, timer);
      socket.once("close", () => {
        clearTimeout(timer);
        if (handshakeTimers.get(key) === timer) handshakeTimers.delete(key);
      });
    });
    // The WebSocket mapping is latency-sensitive: without this Nagle adds ~40 ms per round trip.
    s.on("secureConnection", (socket: TLSSocket) => socket.setNoDelay(true));
    s.on("upgrade", (_req: unknown, socket: Socket) => requested(socket));
    s.on("stream", (stream: { session?: { socket?: Socket } }) => requested(stream.session?.socket));
  }
  const sweep = startIdleSweep(live, limits.idleTimeoutMs, logger);
  const address = server.address();
  if (!address) throw new Error("stream server did not start");
  logger.info({ event: "streams-listening", port: address.port, routes: Object.keys(routes), http3, limits }, "stream server listening");

  async function acceptLoop(stream: ReadableStream<WtSession>, route: StreamRoute): Promise<void> {
    const reader = stream.getReader();
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        logger.error({ err, kind: route.kind }, "stream accept loop ended");
        return;
      }
      const { value: session, done } = next;
      if (done) return;
      if (sessions.size >= limits.maxSessions) {
        safeClose(session, CloseCode.Internal, "too many sessions");
        continue;
      }
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
    const { gameId, principal } = wt.userData ?? {};
    // The request callback admitted only authorized requests; a session without its data did not pass it.
    if (!principal || !gameId) return safeClose(wt, CloseCode.Unauthenticated, "session was not authorized");
    const streams = wt.incomingBidirectionalStreams.getReader();
    const first = await Promise.race([
      streams.read(),
      wt.closed.then(() => undefined, () => undefined),
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), limits.streamOpenTimeoutMs).unref()),
    ]);
    if (first === undefined) return; // client went away
    if (first === "timeout") return safeClose(wt, CloseCode.Malformed, "no stream opened");
    if (first.done) return;
    streams.releaseLock();
    const entry = adapt(wt, first.value, route.kind, gameId, principal, logger);
    if (!shares.admit(entry.session, addressOfPeer(wt.peerAddress))) return;
    live.add(entry);
    void entry.session.closed.then(() => live.delete(entry));
    runHandler(route, entry.session, logger);
  }

  return {
    get port() {
      return address.port;
    },
    transports: http3 ? "http3+http2+websocket" : "http2+websocket",
    certificate: opts.certificate,
    limits,
    get openSessions() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      for (const t of handshakeTimers.values()) clearTimeout(t);
      handshakeTimers.clear();
      for (const s of sessions) safeClose(s, CloseCode.Internal, "server shutting down");
      server.stopServer();
      await Promise.race([server.closed, new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}


function safeClose(wt: WtSession, code: number, reason: string): void {
  try {
    wt.close({ closeCode: code, reason });
  } catch {
    // already closed
  }
}

/** The transport-free view of a session that component handlers work with. Nothing on it throws. */
function adapt(wt: WtSession, bidi: WtBidiStream, kind: string, gameId: string, principal: Principal, logger: Logger): LiveSession {
  const writer = bidi.writable.getWriter();
  let buffered = 0;
  const ending = new SessionEnding();
  const { inbox } = ending;
  wt.closed.then(
    (info) => ending.finish({ code: info?.closeCode ?? 0, reason: info?.reason ?? "", by: "client" }),
    (err: unknown) => ending.finish({ code: CloseCode.Internal, reason: String((err as Error)?.message ?? err), by: "transport" }),
  );
  let reading = false;
  // Read once the handler reads: each chunk to the inbox, then its end.
  const pump = async (): Promise<void> => {
    const reader = bidi.readable.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || ending.ended) return;
        if (value && value.byteLength > 0) {
          entry.lastActivity = performance.now();
          inbox.deliver(value);
        }
      }
    } catch {
      // The transport broke; `closed` says how.
    } finally {
      reader.releaseLock();
      inbox.end();
    }
  };
  const session: StreamSession = {
    gameId,
    principal,
    kind,
    read(reader) {
      inbox.read(reader);
      if (reading) return;
      reading = true;
      void pump();
    },
    send(bytes) {
      if (ending.ended) return false;
      buffered += bytes.byteLength;
      entry.lastActivity = performance.now();
      try {
        writer.write(bytes).then(
          () => (buffered -= bytes.byteLength),
          () => (buffered -= bytes.byteLength),
        );
      } catch (err) {
        // The transport refused the write outright (it broke under us): this session ends.
        buffered -= bytes.byteLength;
        logger.warn({ err, kind, gameId }, "stream write failed");
        session.close(CloseCode.Internal, "write failed");
        return false;
      }
      return true;
    },
    sendFrom(source, start, end) {
      // The WebTransport writer keeps what it is given until written: it gets its own copy.
      return session.send(source.slice(start, end));
    },
    get bufferedBytes() {
      return buffered;
    },
    close(code, reason) {
      if (ending.ended) return;
      ending.finish({ code, reason, by: "server" });
      let closing: Promise<void>;
      try {
        closing = writer.close();
      } catch {
        closing = Promise.resolve();
      }
      void closing.catch(() => undefined).finally(() => safeClose(wt, code, reason));
    },
    closed: ending.closed,
  };
  const entry: LiveSession = { session, lastActivity: performance.now() };
  return entry;
}
