import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { Code } from "@connectrpc/connect";
import type { EventTally } from "./event-tally.js";

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;
export type RequestHandler = (req: Request, res: Response) => void;

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
}

export interface Admission {
  /** Handles `req` now, queues it, or sheds it with `resource_exhausted`. */
  readonly handle: RequestHandler;
  inFlight(): number;
  queued(): number;
}

interface Waiting {
  readonly req: Request;
  readonly res: Response;
  readonly timer: NodeJS.Timeout;
  done: boolean;
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
export function createAdmission(handler: RequestHandler, opts: AdmissionOptions): Admission {
  let active = 0;
  const queue: Waiting[] = [];
  let head = 0;
  let waiting = 0;

  const start = (req: Request, res: Response): void => {
    active++;
    let released = false;
    res.once("close", () => {
      if (released) return;
      released = true;
      active--;
      next();
    });
    handler(req, res);
  };
  const next = (): void => {
    while (active < opts.maxConcurrent && head < queue.length) {
      const w = queue[head]!;
      queue[head++] = undefined as unknown as Waiting;
      if (w.done) continue;
      w.done = true;
      waiting--;
      clearTimeout(w.timer);
      start(w.req, w.res);
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
    if (active < opts.maxConcurrent && waiting === 0) {
      start(req, res);
      return;
    }
    if (waiting >= opts.maxQueued) {
      shed(req, res, "queue-full");
      return;
    }
    const w: Waiting = {
      req,
      res,
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
  };
  return { handle, inFlight: () => active, queued: () => waiting };
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
