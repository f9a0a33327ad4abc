import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { fromBinary, type DescMessage, type DescMethodUnary, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createConnectRouter, createContextValues, type ConnectRouterOptions, type ServiceImpl } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { clientAddressKey } from "@flaplab/component";
import { jsonRegistryOf } from "@flaplab/runtime";
import type { Logger } from "pino";
import { writeError } from "./admission.js";
import { ENVELOPE_PREFIX_BYTES, readBody } from "./body.js";
import { connectUnaryFormat, isLeanGrpc, mediaTypeOf, serveConnectUnary, serveGrpcUnary, type UnaryImpl } from "./connect-unary.js";

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
  /**
   * Serves `req` when its path is a mounted RPC (true); leaves anything else to the caller (false).
   * `body`: the request body, when it was read already (admission reads a call's body before the
   * call takes a slot); read here otherwise.
   */
  handle(req: NodeRequest, res: NodeResponse, body?: Uint8Array): boolean;
  /** Whether `req`'s path is a mounted RPC (what `handle` serves). */
  isCall(req: NodeRequest): boolean;
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
 * input) instead of Connect-ES's `internal`, in every protocol: the lean paths decode it
 * themselves; before Connect-ES's handler, the messages of an enveloped binary body are decoded
 * here first (undecodableMessage).
 */
export function createConnectRoutes(opts: ConnectRoutesOptions): ConnectRoutes {
  const shutdown = new AbortController();
  // JSON needs the services' types to write and read a google.protobuf.Any; found once, here.
  const json = { registry: opts.jsonOptions?.registry ?? jsonRegistryOf(opts.services.map((s) => s.service)) };
  const router = createConnectRouter({ ...opts, jsonOptions: { ...opts.jsonOptions, ...json }, shutdownSignal: shutdown.signal });
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
    read: Uint8Array | undefined,
  ): Promise<void> => {
    const declared = Number(headerOf(req, "content-length"));
    let body: Uint8Array;
    try {
      body = read ?? (await readBody(req, opts.readMaxBytes));
    } catch {
      return; // the client went away while sending
    }
    const size = declared > opts.readMaxBytes ? declared : body.byteLength;
    const values = createContextValues().set(clientAddressKey, req.socket?.remoteAddress);
    const headers: OutgoingHttpHeaders = opts.corsHeaders(headerOf(req, "origin"));
    await serveConnectUnary(target.method, target.impl, format, req, res, body, size, headers, values, shutdown.signal, opts.readMaxBytes, json);
  };

  const serve = async (handler: UniversalHandler, req: NodeRequest, res: NodeResponse, read: Uint8Array | undefined): Promise<void> => {
    let body: Uint8Array;
    try {
      body = read ?? (await readBody(req, opts.readMaxBytes));
    } catch {
      return; // the client went away while sending
    }
    // gRPC unary, binary, one uncompressed message (what gRPC clients send): without Connect-ES's handler.
    const target = unary.get(handler.requestPath);
    // (A body read past the limit may hold a whole message that is too large: left to oversizedMessage.)
    if (target !== undefined && body.byteLength <= opts.readMaxBytes + ENVELOPE_PREFIX_BYTES && isLeanGrpc(req, body)) {
      const values = createContextValues().set(clientAddressKey, req.socket?.remoteAddress);
      await serveGrpcUnary(target.method, target.impl, req, res, body, opts.corsHeaders(headerOf(req, "origin")), values, shutdown.signal);
      return;
    }
    const contentType = headerOf(req, "content-type") ?? "";
    // The body was cut at the size limit (admission and readBody keep room for one envelope): too large.
    const oversized = oversizedMessage(contentType, headerOf(req, "content-length"), body, opts.readMaxBytes);
    if (oversized !== undefined) {
      const message = `message size ${oversized} is larger than configured readMaxBytes ${opts.readMaxBytes}`;
      writeError(req, res, Code.ResourceExhausted, message, opts.corsHeaders(headerOf(req, "origin")));
      return;
    }
    // Connect-ES answers a message it cannot decode with `internal`; the client sent bad input. A
    // compressed body (an encoding the host does not accept) is left to Connect-ES: unimplemented.
    const encoding = headerOf(req, "grpc-encoding");
    const plain = encoding === undefined || encoding === "identity";
    const undecodable = plain ? undecodableMessage(handler.method.input, contentType, body) : undefined;
    if (undecodable !== undefined) {
      writeError(req, res, Code.InvalidArgument, `parse binary: ${undecodable}`, opts.corsHeaders(headerOf(req, "origin")));
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
    const out = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const status = answer.status;
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

  const handlerOf = (req: NodeRequest): { path: string; handler: UniversalHandler } | undefined => {
    if (req.method === "OPTIONS") return undefined;
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const handler = byPath.get(path);
    return handler === undefined ? undefined : { path, handler };
  };

  return {
    isCall: (req) => handlerOf(req) !== undefined,
    handle(req, res, body) {
      const found = handlerOf(req);
      if (found === undefined) return false;
      const { path, handler } = found;
      const target = unary.get(path);
      const format = target === undefined ? undefined : connectUnaryFormat(req);
      const served = target !== undefined && format !== undefined ? serveUnary(target, format, req, res, body) : serve(handler, req, res, body);
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

/** gRPC and gRPC-Web binary content types (the enveloped ones Connect-ES takes for a unary method). */
const GRPC_BINARY = new Set(["application/grpc", "application/grpc+proto", "application/grpc-web", "application/grpc-web+proto"]);
const COMPRESSED = 0x01;

/**
 * The size of a gRPC or gRPC-Web request's message when it is larger than `readMaxBytes` (the
 * size its envelope or its content-length declares), else undefined. Such a body was not read,
 * or read only up to the limit, so Connect-ES would find a message missing or cut short.
 */
function oversizedMessage(contentType: string, contentLength: string | undefined, body: Uint8Array, readMaxBytes: number): number | undefined {
  if (!mediaTypeOf(contentType).startsWith("application/grpc")) return undefined;
  const declared = Number(contentLength);
  if (declared > readMaxBytes + ENVELOPE_PREFIX_BYTES) return declared - ENVELOPE_PREFIX_BYTES;
  if (body.byteLength < ENVELOPE_PREFIX_BYTES) return undefined;
  const length = new DataView(body.buffer, body.byteOffset, ENVELOPE_PREFIX_BYTES).getUint32(1);
  return length > readMaxBytes ? length : undefined;
}

/**
 * Why a gRPC or gRPC-Web binary request body holds a message of `schema` that cannot be decoded
 * (the decoder's message), or undefined when every message decodes, when an envelope is
 * compressed, when the framing is broken (Connect-ES answers that itself, as a protocol error) or
 * when the content type is another. Connect-ES decodes every envelope whose compressed flag is
 * clear, whatever its other bits say. (Connect streaming content types are refused for unary
 * methods by Connect-ES itself, with 415.)
 */
function undecodableMessage(schema: DescMessage, contentType: string, body: Uint8Array): string | undefined {
  if (!GRPC_BINARY.has(mediaTypeOf(contentType))) return undefined;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  for (let at = 0; at + 5 <= body.byteLength; ) {
    const flags = body[at]!;
    const end = at + 5 + view.getUint32(at + 1);
    if (end > body.byteLength) return undefined;
    if ((flags & COMPRESSED) === 0) {
      try {
        fromBinary(schema, body.subarray(at + 5, end));
      } catch (e) {
        return e instanceof Error ? e.message : String(e);
      }
    }
    at = end;
  }
  return undefined;
}
