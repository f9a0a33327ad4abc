import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from "node:http2";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import type { Logger } from "pino";
import { createAdmission, type Admission, type CallHandler } from "./admission.js";
import type { HostLimits } from "./config.js";
import { createEventTally, type EventTally } from "./event-tally.js";


/** How long close() lets calls in flight finish before it cuts their connections. */
export const CLOSE_GRACE_MS = 3000;

export interface DualProtocolOptions {
  readonly limits: HostLimits;
  readonly logger: Logger;
  /** CORS headers for answers written outside Fastify (shed calls) to a browser from `origin`. */
  readonly corsHeaders?: (origin: string | undefined) => Record<string, string>;
  /** Interval of the rate-limited shed and connection logs (default 5000 ms). */
  readonly logIntervalMs?: number;
  /** HTTP/1.1 requests with an Upgrade header (WebSocket streams) go here; without it they are ordinary requests. */
  readonly onUpgrade?: UpgradeHandler;
  /** Requests that are calls (their body is read before they take a slot; see admission.ts). */
  readonly isCall?: (req: IncomingMessage | Http2ServerRequest) => boolean;
  /** Largest call body read before the call is admitted (default 1 MiB). */
  readonly readMaxBytes?: number;
}

/** Takes an HTTP/1.1 Upgrade request and its socket (it answers and owns the socket from then on). */
export type UpgradeHandler = (req: IncomingMessage, socket: Socket, head: Buffer) => void;

/** The dual-protocol server, with its admission control and counters. */
export interface DualProtocolServer extends Server {
  readonly admission: Admission;
  /** Calls shed, per reason (`queue-full`, `queue-timeout`), since start. */
  readonly shed: EventTally;
  /** Connections closed by the server (`first-byte-timeout`, `idle-h2c`, `max-connections`), since start. */
  readonly closedConnections: EventTally;
}

/**
 * One TCP port for HTTP/1.1 and h2c (HTTP/2 with prior knowledge): the first bytes of a connection
 * decide. Node's own servers speak only one of the two without TLS.
 *
 * Bounded: at most `maxConnections` connections; one that sends nothing within
 * `firstByteTimeoutMs` (or HTTP/1.1 headers not complete within it) is closed; an HTTP/1.1
 * keep-alive connection or an h2c session with no call in progress for `idleTimeoutMs` is closed.
 * RPCs pass a concurrency limit with a bounded queue (`admission.ts`); h2c sessions advertise
 * `maxStreamsPerSession` and get `maxSessionMemoryMiB`, so that a flood on one connection is
 * answered call by call with `resource_exhausted` instead of Node's ENHANCE_YOUR_CALM resets and
 * the session's destruction (see the package README).
 *
 * close() is graceful: no new connections, idle ones closed at once, HTTP/2 sessions told to go
 * away after their open streams, and whatever is still open after CLOSE_GRACE_MS destroyed.
 */
export function createDualProtocolServer(handler: CallHandler, opts: DualProtocolOptions): DualProtocolServer {
  const { limits, logger } = opts;
  const intervalMs = opts.logIntervalMs ?? 5000;
  const shed = createEventTally({
    logger,
    event: "rpc-shed",
    message: "calls shed with resource_exhausted",
    intervalMs,
    context: () => ({ inFlight: admission.inFlight(), queued: admission.queued() }),
  });
  const closedConnections = createEventTally({
    logger,
    event: "connections-closed",
    message: "connections closed by the server",
    level: "info",
    intervalMs,
    context: () => ({ open: sockets.size }),
  });
  const admission = createAdmission(handler, {
    maxConcurrent: limits.maxConcurrentCalls,
    maxQueued: limits.maxQueuedCalls,
    maxQueueWaitMs: limits.maxQueueWaitMs,
    shedLog: shed,
    bodyTimeoutMs: limits.bodyTimeoutMs,
    maxCallsPerConnection: limits.maxCallsPerConnection,
    maxCallsPerAddress: limits.maxCallsPerAddress,
    onBodyTimeout: () => closedConnections.add("body-timeout"),
    ...(opts.isCall ? { isCall: opts.isCall } : {}),
    ...(opts.readMaxBytes === undefined ? {} : { readMaxBytes: opts.readMaxBytes }),
    ...(opts.corsHeaders ? { corsHeaders: opts.corsHeaders } : {}),
  });
  const h1 = createHttp1Server(
    {
      keepAliveTimeout: limits.idleTimeoutMs,
      headersTimeout: limits.firstByteTimeoutMs,
      requestTimeout: Math.max(300_000, limits.firstByteTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(limits.firstByteTimeoutMs / 4))),
    },
    admission.handle as (req: IncomingMessage, res: ServerResponse) => void,
  );
  const onUpgrade = opts.onUpgrade;
  if (onUpgrade) h1.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => onUpgrade(req, socket, head));
  // Node checks headers and request timeouts only once the server has emitted "listening"; this
  // one never listens (it gets its connections from the front server).
  h1.emit("listening");
  const h2 = createHttp2Server(
    {
      settings: { maxConcurrentStreams: limits.maxStreamsPerSession },
      maxSessionMemory: limits.maxSessionMemoryMiB,
    },
    admission.handle as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  const sockets = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  h2.on("session", (session: ServerHttp2Session) => {
    sessions.add(session);
    // Idle: no stream open for idleTimeoutMs.
    let open = 0;
    const idle = setTimeout(() => {
      if (open > 0 || session.closed || session.destroyed) return;
      closedConnections.add("idle-h2c");
      session.close();
      setTimeout(() => session.destroy(), 1000).unref();
    }, limits.idleTimeoutMs);
    idle.unref();
    session.on("stream", (stream) => {
      // The timer keeps running (a cleared one cannot be refreshed); it ignores busy sessions. A
      // stream makes its session busy once its request is complete (its END_STREAM came): one whose
      // body never comes is no call in progress, and does not keep the session open.
      let working = false;
      stream.once("end", () => {
        if (stream.destroyed) return;
        working = true;
        open++;
      });
      stream.once("close", () => {
        if (working && --open === 0) idle.refresh();
      });
    });
    session.on("error", (err) => logger.warn({ event: "h2-session-error", err: { message: err.message, code: (err as NodeJS.ErrnoException).code } }, "h2c session error"));
    session.on("close", () => {
      clearTimeout(idle);
      sessions.delete(session);
    });
  });
  // HTTP/1.1 sockets with a response in progress; every other HTTP/1.1 socket is idle.
  const busy = new Map<Socket, number>();
  h1.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.on("close", () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
      if (closing && left <= 0) socket.end();
    });
  });
  let closing = false;
  const front = createTcpServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const firstByte = setTimeout(() => {
      closedConnections.add("first-byte-timeout");
      socket.destroy();
    }, limits.firstByteTimeoutMs);
    firstByte.unref();
    socket.on("close", () => {
      clearTimeout(firstByte);
      sockets.delete(socket);
    });
    socket.on("error", () => socket.destroy());
    const route = (): void => {
      // Three bytes tell "PRI" (the h2c preface) from an HTTP/1.1 method; read(3) gives fewer only at
      // the end of the input. A preface split across packets waits for its next part.
      const head = socket.read(3) as Buffer | null;
      if (head === null) {
        if (!socket.destroyed) socket.once("readable", route);
        return;
      }
      clearTimeout(firstByte);
      socket.unshift(head);
      const isH2 = (head as Buffer).toString("latin1").startsWith("PRI");
      if (!isH2) {
        h1Sockets.add(socket);
        socket.on("close", () => h1Sockets.delete(socket));
      }
      (isH2 ? h2 : h1).emit("connection", socket);
      if (closing) drain();
    };
    socket.once("readable", route);
  }) as DualProtocolServer;
  front.maxConnections = limits.maxConnections;
  front.on("drop", () => closedConnections.add("max-connections"));
  const drain = (): void => {
    for (const s of sessions) if (!s.closed) s.close();
    for (const socket of h1Sockets) if (!busy.has(socket)) socket.end();
  };
  const h1Sockets = new Set<Socket>();
  const close = front.close.bind(front);
  front.close = ((cb?: (err?: Error) => void) => {
    closing = true;
    const result = close(cb);
    drain();
    h1.close(); // stops its timeout checks
    shed.close();
    closedConnections.close();
    const cut = setTimeout(() => {
      for (const s of sockets) s.destroy();
    }, CLOSE_GRACE_MS);
    front.once("close", () => {
      clearTimeout(cut);
    });
    return result;
  }) as DualProtocolServer["close"];
  Object.assign(front, { admission, shed, closedConnections });
  return front;
}
