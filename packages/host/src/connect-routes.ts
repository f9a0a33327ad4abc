import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { fromBinary, type DescMessage, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createConnectRouter, createContextValues, type ConnectRouterOptions, type ServiceImpl } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { clientAddressKey } from "@flaplab/component";
import type { Logger } from "pino";
import { writeError } from "./admission.js";
import { connectUnaryFormat, isLeanGrpc, serveConnectUnary, serveGrpcUnary, type UnaryImpl } from "./connect-unary.js";

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

export interface ConnectRoutesOptions extends ConnectRouterOptions {
  /** The services served, with their (guarded) implementations. */
  readonly services: readonly { readonly service: DescService; readonly impl: ServiceImpl<DescService> }[];
  /** Largest request body accepted; larger ones get `resource_exhausted`. */
  readonly readMaxBytes: number;
  /** Calls still running this long after shutdown() are aborted. */
  readonly shutdownTimeoutMs: number;
  /** CORS headers for the answer to a browser from `origin` (none for an unlisted origin). */
  readonly corsHeaders: (origin: string | undefined) => Record<string, string>;
  readonly logger: Logger;
}

export interface ConnectRoutes {
  /** Serves `req` when its path is a mounted RPC (true); leaves anything else to the caller (false). */
  handle(req: NodeRequest, res: NodeResponse): boolean;
  /** Aborts the calls still running `shutdownTimeoutMs` from now. */
  shutdown(): void;
}

/**
 * Connect, gRPC and gRPC-Web routes served straight from the Node server's request handler, in
 * front of Fastify: a request whose path is `/<service>/<method>` of a mounted component goes to
 * Connect's handler for it; everything else (health, CORS preflights, streams) falls through.
 *
 * Compared with mounting the routes on Fastify (as @connectrpc/connect-fastify does) a call skips
 * Fastify's routing, hooks, reply object and header copies; the body is read once into memory (the
 * runtime serves unary calls only), and the answer goes out as one write with its content length.
 *
 * A request body that is not valid protobuf is answered `invalid_argument` (the client sent bad
 * input) instead of Connect-ES's `internal`, in every protocol (gRPC-Web in the body's trailer
 * frame): when Connect answers `internal`, the body is decoded again here, and the answer is
 * rewritten only if that fails.
 */
export function createConnectRoutes(opts: ConnectRoutesOptions): ConnectRoutes {
  const shutdown = new AbortController();
  const router = createConnectRouter({ ...opts, shutdownSignal: shutdown.signal });
  const byPath = new Map<string, UniversalHandler>();
  const unary = new Map<string, { method: DescMethodUnary; impl: UnaryImpl }>();
  for (const { service, impl } of opts.services) {
    router.service(service, impl);
    for (const method of service.methods) {
      const fn = (impl as unknown as Record<string, UnaryImpl | undefined>)[method.localName];
      if (method.methodKind === "unary" && fn !== undefined) {
        unary.set(`/${service.typeName}/${method.name}`, { method: method as DescMethodUnary, impl: fn.bind(impl) });
      }
    }
  }
  for (const handler of router.handlers) byPath.set(handler.requestPath, handler);

  /** A Connect unary call (what runtime clients send with the Connect protocol), without Connect's universal handler. */
  const serveUnary = async (
    target: { method: DescMethodUnary; impl: UnaryImpl },
    format: "binary" | "json",
    req: NodeRequest,
    res: NodeResponse,
  ): Promise<void> => {
    const declared = Number(headerOf(req, "content-length"));
    let body: Uint8Array;
    try {
      body = await readBody(req, opts.readMaxBytes);
    } catch {
      return; // the client went away while sending
    }
    const size = declared > opts.readMaxBytes ? declared : body.byteLength;
    const values = createContextValues().set(clientAddressKey, req.socket?.remoteAddress);
    const headers: OutgoingHttpHeaders = opts.corsHeaders(headerOf(req, "origin"));
    await serveConnectUnary(target.method, target.impl, format, req, res, body, size, headers, values, shutdown.signal, opts.readMaxBytes);
  };

  const serve = async (handler: UniversalHandler, req: NodeRequest, res: NodeResponse): Promise<void> => {
    let body: Uint8Array;
    try {
      body = await readBody(req, opts.readMaxBytes);
    } catch {
      return; // the client went away while sending
    }
    // gRPC unary, binary, one uncompressed message (what gRPC clients send): without Connect-ES's handler.
    const target = unary.get(handler.requestPath);
    if (target !== undefined && isLeanGrpc(req, body)) {
      const values = createContextValues().set(clientAddressKey, req.socket?.remoteAddress);
      await serveGrpcUnary(target.method, target.impl, req, res, body, opts.corsHeaders(headerOf(req, "origin")), values, shutdown.signal);
      return;
    }
    await serveUniversal(handler, req, res, body);
  };

  /** Any other call: Connect-ES's universal handler of the method. */
  const serveUniversal = async (handler: UniversalHandler, req: NodeRequest, res: NodeResponse, body: Uint8Array): Promise<void> => {
    const origin = headerOf(req, "origin");
    const signal = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) signal.abort(new ConnectError("the client closed the call", Code.Canceled));
    });
    let ureq: UniversalServerRequest;
    try {
      ureq = {
        httpVersion: req.httpVersion,
        method: req.method ?? "",
        url: urlOf(req),
        header: webHeaders(req),
        body: oneChunk(body),
        signal: signal.signal,
        // The caller's address, for handlers that limit per client (auth's login throttling).
        contextValues: createContextValues().set(clientAddressKey, req.socket?.remoteAddress),
      };
    } catch (err) {
      // Header values undici refuses (Node's parser is more lenient).
      writeError(req, res, Code.InvalidArgument, `bad request headers: ${ConnectError.from(err).rawMessage}`, opts.corsHeaders(origin));
      return;
    }
    const answer = await handler(ureq);
    const chunks: Uint8Array[] = [];
    if (answer.body !== undefined) {
      for await (const chunk of answer.body as AsyncIterable<Uint8Array>) chunks.push(chunk);
    }
    let out = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    let status = answer.status;
    if (isInternal(answer, out) && !decodes(handler.method.input, headerOf(req, "content-type") ?? "", body)) {
      [status, out] = asInvalidArgument(answer, out);
    }
    const headers: OutgoingHttpHeaders = opts.corsHeaders(origin);
    answer.header?.forEach((value, key) => {
      headers[key] = value;
    });
    if (res.writableEnded || res.destroyed) return;
    if (answer.trailer === undefined) {
      headers["content-length"] = out.byteLength;
      res.writeHead(status, headers);
    } else {
      // gRPC: the status travels in trailers (HTTP/2), so no content length.
      delete headers["content-length"];
      res.writeHead(status, headers);
      const trailers: Record<string, string> = {};
      answer.trailer.forEach((value, key) => {
        trailers[key] = value;
      });
      res.addTrailers(trailers);
    }
    (res as ServerResponse).end(out);
  };

  return {
    handle(req, res) {
      if (req.method === "OPTIONS") return false;
      const url = req.url ?? "";
      const q = url.indexOf("?");
      const path = q < 0 ? url : url.slice(0, q);
      const handler = byPath.get(path);
      if (handler === undefined) return false;
      const target = unary.get(path);
      const format = target === undefined ? undefined : connectUnaryFormat(req);
      const served = target !== undefined && format !== undefined ? serveUnary(target, format, req, res) : serve(handler, req, res);
      served.catch((err: unknown) => {
        opts.logger.error({ event: "rpc-failed", err, rpc: handler.requestPath }, "rpc handler failed");
        if (!res.headersSent) writeError(req, res, Code.Internal, "internal error", opts.corsHeaders(headerOf(req, "origin")));
        else res.destroy();
      });
      return true;
    },
    shutdown() {
      setTimeout(() => shutdown.abort(new ConnectError("server is shutting down", Code.Unavailable)), opts.shutdownTimeoutMs).unref();
    },
  };
}

function headerOf(req: NodeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Reads the request body; stops at `limit` + 1 bytes (Connect then answers resource_exhausted) and drops the rest. */
function readBody(req: NodeRequest, limit: number): Promise<Uint8Array> {
  const declared = Number(headerOf(req, "content-length"));
  if (declared > limit) {
    // Connect refuses it from the header alone; nothing of it is needed.
    req.resume();
    return Promise.resolve(new Uint8Array(0));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (): void => {
      done = true;
      req.off("data", onData);
      req.off("end", finish);
      req.off("error", fail);
      req.off("aborted", fail);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const fail = (err?: unknown): void => {
      if (done) return;
      done = true;
      req.off("data", onData);
      reject(err instanceof Error ? err : new Error("request aborted"));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size > limit) {
        // Enough to know it is too large; the rest is read and dropped.
        finish();
        req.resume();
      }
    };
    req.on("data", onData);
    req.once("end", finish);
    req.once("error", fail);
    req.once("aborted", fail);
  });
}

const SIMPLE_AUTHORITY = /^[\w.-]+(:\d+)?$|^\[[\d a-f:.]+\](:\d+)?$/i;

/** The request URL Connect's handler wants (absolute; it reads query parameters of GET calls). */
function urlOf(req: NodeRequest): string {
  const authority = "authority" in req ? req.authority : req.headers.host;
  const host = authority !== undefined && SIMPLE_AUTHORITY.test(authority) ? authority : "localhost";
  return `http://${host}${req.url ?? "/"}`;
}

/** The request headers as Fetch API Headers, without HTTP/2 pseudo-headers. */
function webHeaders(req: NodeRequest): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.charCodeAt(0) !== 58 /* ":" */) headers.append(name, raw[i + 1]!);
  }
  return headers;
}

async function* oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

const enum Protocol {
  Connect,
  Grpc,
  GrpcWeb,
}

function protocolOf(answer: UniversalServerResponse): Protocol {
  const type = answer.header?.get("content-type") ?? "";
  if (type.startsWith("application/grpc-web")) return Protocol.GrpcWeb;
  if (type.startsWith("application/grpc")) return Protocol.Grpc;
  return Protocol.Connect;
}

const INTERNAL = String(Code.Internal);

/** Whether Connect answered `internal` (in the answer's protocol). */
function isInternal(answer: UniversalServerResponse, body: Uint8Array): boolean {
  switch (protocolOf(answer)) {
    case Protocol.Grpc:
      return answer.trailer?.get("grpc-status") === INTERNAL;
    case Protocol.GrpcWeb:
      return grpcWebTrailer(body)?.get("grpc-status") === INTERNAL;
    case Protocol.Connect:
      return answer.status === 500 && connectErrorCode(body) === "internal";
  }
}

/** Whether `body` holds protobuf messages of `schema` in the encoding `contentType` names; true when it cannot tell (JSON, compressed). */
function decodes(schema: DescMessage, contentType: string, body: Uint8Array): boolean {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  try {
    if (type === "application/proto") {
      fromBinary(schema, body);
      return true;
    }
    if (type === "application/grpc" || type === "application/grpc+proto" || type === "application/grpc-web" || type === "application/grpc-web+proto" || type === "application/connect+proto") {
      const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
      for (let at = 0; at + 5 <= body.byteLength; ) {
        const flags = body[at]!;
        const length = view.getUint32(at + 1);
        if (flags !== 0) return true; // compressed or end-of-stream: not ours to judge
        fromBinary(schema, body.subarray(at + 5, at + 5 + length));
        at += 5 + length;
      }
    }
    return true;
  } catch {
    return false;
  }
}

/** The same answer with `invalid_argument` instead of `internal`: [status, body]; gRPC's trailer is changed in place. */
function asInvalidArgument(answer: UniversalServerResponse, body: Uint8Array): [number, Uint8Array] {
  const invalid = String(Code.InvalidArgument);
  switch (protocolOf(answer)) {
    case Protocol.Grpc:
      answer.trailer?.set("grpc-status", invalid);
      return [answer.status, body];
    case Protocol.GrpcWeb: {
      const trailer = grpcWebTrailer(body)!;
      trailer.set("grpc-status", invalid);
      let text = "";
      trailer.forEach((value, key) => {
        text += `${key}: ${value}\r\n`;
      });
      const frame = Buffer.from(`\0\0\0\0\0${text}`, "utf8");
      frame[0] = 0x80;
      frame.writeUInt32BE(frame.byteLength - 5, 1);
      const start = body.byteLength - grpcWebTrailerLength(body)!;
      return [answer.status, Buffer.concat([body.subarray(0, start), frame])];
    }
    case Protocol.Connect: {
      const error = JSON.parse(Buffer.from(body).toString("utf8")) as Record<string, unknown>;
      return [400, Buffer.from(JSON.stringify({ ...error, code: "invalid_argument" }))];
    }
  }
}

/** The `code` of a Connect unary error body, if it is one. */
function connectErrorCode(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(body).toString("utf8")) as { code?: unknown };
    return typeof parsed.code === "string" ? parsed.code : undefined;
  } catch {
    return undefined;
  }
}

/** Length of the gRPC-Web trailer frame (flag 0x80) that ends `body`, prefix included, if it ends with one. */
function grpcWebTrailerLength(body: Uint8Array): number | undefined {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  for (let at = 0; at + 5 <= body.byteLength; ) {
    const length = view.getUint32(at + 1);
    if (body[at] === 0x80 && at + 5 + length === body.byteLength) return 5 + length;
    at += 5 + length;
  }
  return undefined;
}

/** The header lines of the gRPC-Web trailer frame that ends `body`. */
function grpcWebTrailer(body: Uint8Array): Headers | undefined {
  const length = grpcWebTrailerLength(body);
  if (length === undefined) return undefined;
  const headers = new Headers();
  for (const line of Buffer.from(body.subarray(body.byteLength - length + 5)).toString("utf8").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return headers;
}
