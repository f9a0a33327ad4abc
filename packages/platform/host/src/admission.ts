import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { constants as h2 } from "node:http2";
import { Code } from "@connectrpc/connect";
import { readBody } from "./body.js";
import type { EventTally } from "./event-tally.js";

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
export type RequestHandler = (req: Request, res: Response) => void;
/** Serves a request; `body` is the call's body when admission read it before the call took a slot. */
export type CallHandler = (req: Request, res: Response, body?: Uint8Array) => void;

export interface AdmissionOptions {
  /** Most requests handled at the same time. */
  readonly maxConcurrent: number;
  /** Most requests waiting for a slot. */
  readonly maxQueued: number;
  /** A request waiting this long is shed (ms). */
  readonly maxQueueWaitMs: number;
  /** Counts shed calls (logged rate-limited). */
  readonly shedLog: EventTally;
  /** CORS headers for a shed response to a browser from `origin` (none for an unlisted origin). */
  readonly corsHeaders?: (origin: string | undefined) => Record<string, string>;
  /**
   * Requests that are calls: their body is read before they take a slot or a queue place, within
   * `bodyTimeoutMs`, and handed to the handler. Others (unknown paths) take a slot as they come.
   */
  readonly isCall?: (req: Request) => boolean;
  /** Largest call body read (more is dropped; the handler refuses it). */
  readonly readMaxBytes?: number;
  /** A call whose body is not complete this long after its headers is cut (ms; default 5000). */
  readonly bodyTimeoutMs?: number;
  /** Most calls of one connection (h2c session or HTTP/1.1 socket) being received, queued or handled (default unbounded). */
  readonly maxCallsPerConnection?: number;
  /** Most calls from one client address being received, queued or handled (default unbounded). */
  readonly maxCallsPerAddress?: number;
  /** Told of each call cut at its body deadline. */
  readonly onBodyTimeout?: () => void;
}

export interface Admission {
  /** Handles `req` now, queues it, or sheds it with `resource_exhausted`. */
  readonly handle: RequestHandler;
  inFlight(): number;
  queued(): number;
  /** Calls whose body is still being received (they hold no slot). */
  receiving(): number;
}

interface Waiting {
  readonly req: Request;
  readonly res: Response;
  readonly body: Uint8Array | undefined;
  readonly timer: NodeJS.Timeout;
  done: boolean;
}

/** The connection a request came on: its h2c session, or its HTTP/1.1 socket. */
function connectionOf(req: Request): object {
  return "stream" in req ? req.stream.session ?? req.socket : req.socket;
}

/** The message of a shed call. */
export const SHED_MESSAGE = "server overloaded: too many calls in progress, try again later";

/**
 * A concurrency limit with a bounded FIFO queue in front of `handler`. Requests that are not
 * RPCs (the health check, CORS preflights) bypass it. A request that finds every slot taken and
 * the queue full, or that waited `maxQueueWaitMs`, is answered at once with a
 * `resource_exhausted` error in its own protocol (Connect, gRPC, gRPC-Web): a cheap answer that
 * never reaches Fastify, so shedding costs far less CPU than serving and the server keeps up
 * with floods of twice what it can serve.
 */
export function createAdmission(handler: CallHandler, opts: AdmissionOptions): Admission {
  let active = 0;
  const queue: Waiting[] = [];
  let head = 0;
  let waiting = 0;
  let receiving = 0;
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? 5000;
  const readMaxBytes = opts.readMaxBytes ?? 1024 * 1024;
  const maxPerConnection = opts.maxCallsPerConnection ?? Number.POSITIVE_INFINITY;
  const maxPerAddress = opts.maxCallsPerAddress ?? Number.POSITIVE_INFINITY;
  /** Calls of each connection and address being received, queued or handled. */
  const perConnection = new Map<object, number>();
  const perAddress = new Map<string, number>();

  /** Counts a call against its connection and address until its response closes; false (shed) past a share. */
  const share = (req: Request, res: Response): boolean => {
    const connection = connectionOf(req);
    const address = req.socket?.remoteAddress ?? "";
    const onConnection = perConnection.get(connection) ?? 0;
    if (onConnection >= maxPerConnection) {
      shed(req, res, "connection-share");
      return false;
    }
    const onAddress = perAddress.get(address) ?? 0;
    if (onAddress >= maxPerAddress) {
      shed(req, res, "address-share");
      return false;
    }
    perConnection.set(connection, onConnection + 1);
    perAddress.set(address, onAddress + 1);
    res.once("close", () => {
      const c = (perConnection.get(connection) ?? 1) - 1;
      if (c > 0) perConnection.set(connection, c);
      else perConnection.delete(connection);
      const a = (perAddress.get(address) ?? 1) - 1;
      if (a > 0) perAddress.set(address, a);
      else perAddress.delete(address);
    });
    return true;
  };

  /** Reads a call's body within `bodyTimeoutMs`, holding no slot meanwhile, then admits it. */
  const receive = (req: Request, res: Response): void => {
    receiving++;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      receiving--;
      clearTimeout(timer);
      return true;
    };
    const timer = setTimeout(() => {
      if (!settle()) return;
      opts.onBodyTimeout?.();
      cut(req, res);
    }, bodyTimeoutMs);
    res.once("close", settle);
    readBody(req, readMaxBytes).then(
      (body) => {
        if (settle()) admit(req, res, body);
      },
      () => settle(), // the client went away while sending
    );
  };

  const start = (req: Request, res: Response, body: Uint8Array | undefined): void => {
    active++;
    let released = false;
    res.once("close", () => {
      if (released) return;
      released = true;
      active--;
      next();
    });
    handler(req, res, body);
  };
  const next = (): void => {
    while (active < opts.maxConcurrent && head < queue.length) {
      const w = queue[head]!;
      queue[head++] = undefined as unknown as Waiting;
      if (w.done) continue;
      w.done = true;
      waiting--;
      clearTimeout(w.timer);
      start(w.req, w.res, w.body);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  };
  const handle: RequestHandler = (req, res) => {
    if (!isRpc(req)) {
      handler(req, res);
      return;
    }
    if (!share(req, res)) return;
    if (opts.isCall?.(req)) receive(req, res);
    else admit(req, res, undefined);
  };
  const admit = (req: Request, res: Response, body: Uint8Array | undefined): void => {
    if (active < opts.maxConcurrent && waiting === 0) {
      start(req, res, body);
      return;
    }
    if (waiting >= opts.maxQueued) {
      shed(req, res, "queue-full");
      return;
    }
    const w: Waiting = {
      req,
      res,
      body,
      done: false,
      timer: setTimeout(() => {
        if (w.done) return;
        w.done = true;
        waiting--;
        shed(req, res, "queue-timeout");
      }, opts.maxQueueWaitMs),
    };
    res.once("close", () => {
      if (w.done) return;
      w.done = true;
      waiting--;
      clearTimeout(w.timer);
    });
    waiting++;
    queue.push(w);
  };
  const shed = (req: Request, res: Response, reason: string): void => {
    opts.shedLog.add(reason);
    writeError(req, res, Code.ResourceExhausted, SHED_MESSAGE, opts.corsHeaders?.(header(req, "origin")) ?? {});
    // The answer goes out once the request's body is in: one that never comes is cut.
    if (!req.readableEnded) {
      const timer = setTimeout(() => {
        if (!req.readableEnded) cut(req, res);
      }, bodyTimeoutMs);
      res.once("close", () => clearTimeout(timer));
    }
  };
  return { handle, inFlight: () => active, queued: () => waiting, receiving: () => receiving };
}

/**
 * Ends a call whose body did not come in time: its h2c stream is reset (CANCEL), its HTTP/1.1
 * connection closed (the rest of a request cannot be told from the next one).
 */
function cut(req: Request, res: Response): void {
  if ("stream" in res) {
    if (!res.stream.destroyed) res.stream.close(h2.NGHTTP2_CANCEL);
  } else {
    req.socket.destroy();
  }
}

/** Everything but the health check and CORS preflights. */
function isRpc(req: Request): boolean {
  if (req.method === "OPTIONS") return false;
  return !(req.url === "/healthz" || req.url?.startsWith("/healthz?"));
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Connect's name of a code (`resource_exhausted`). */
function codeName(code: Code): string {
  return Code[code].replace(/[A-Z]/g, (c, i: number) => (i === 0 ? c.toLowerCase() : `_${c.toLowerCase()}`));
}

/** HTTP status of a Connect unary error (Connect protocol spec). */
const CONNECT_HTTP_STATUS: Partial<Record<Code, number>> = { [Code.ResourceExhausted]: 429, [Code.Unavailable]: 503 };

/**
 * Answers `req` with `code` in the protocol its content type names: gRPC and gRPC-Web as a
 * trailers-only response (HTTP 200, `grpc-status` in the headers), Connect streaming as an
 * end-of-stream message, Connect unary (and anything else) as Connect's JSON error body.
 */
export function writeError(req: Request, res: Response, code: Code, message: string, extraHeaders: Record<string, string>): void {
  // The request body is not needed: read and drop it so that the stream or connection can finish.
  req.resume();
  const contentType = header(req, "content-type") ?? "";
  const headers: Record<string, string> = { ...extraHeaders };
  let status = 200;
  let body: Buffer | undefined;
  if (contentType.startsWith("application/grpc")) {
    headers["content-type"] = contentType.split(";")[0]!;
    headers["grpc-status"] = String(code);
    headers["grpc-message"] = encodeURIComponent(message);
  } else if (contentType.startsWith("application/connect+")) {
    headers["content-type"] = contentType.split(";")[0]!;
    const json = Buffer.from(JSON.stringify({ error: { code: codeName(code), message } }));
    body = Buffer.alloc(5 + json.byteLength);
    body.writeUInt8(0b10, 0); // end of stream
    body.writeUInt32BE(json.byteLength, 1);
    json.copy(body, 5);
  } else {
    status = CONNECT_HTTP_STATUS[code] ?? 500;
    headers["content-type"] = "application/json";
    body = Buffer.from(JSON.stringify({ code: codeName(code), message }));
  }
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  if ("stream" in res && body === undefined) {
    // HTTP/2: one HEADERS frame that ends the stream. gRPC clients read grpc-status from the
    // headers only in such a trailers-only response; the compatibility API would send the
    // headers and an empty DATA frame with END_STREAM.
    const stream = res.stream;
    const respond = (): void => {
      if (!stream.destroyed && !stream.headersSent) stream.respond({ ":status": status, ...headers }, { endStream: true });
    };
    // Answered once the request is read to its end (it is small, and read and dropped above): a
    // stream ended while the client is still sending is also reset (RST_STREAM), and under a flood
    // of shed calls thousands of resets queue up on the session, which nghttp2 may end as a flood.
    if (req.readableEnded) respond();
    else req.once("end", respond);
    return;
  }
  res.writeHead(status, headers);
  if (body === undefined) res.end();
  else res.end(body);
}
