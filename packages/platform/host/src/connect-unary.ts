import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { create, fromBinary, fromJsonString, toBinary, toJsonString, type DescMethodUnary, type DescService, type MessageShape, type Registry } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type HandlerContext } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { parseTimeout as parseGrpcTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { UnaryHandlerContext } from "@flaplab/component";

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

/** A unary method's guarded implementation, as the runtime mounts it. */
export type UnaryImpl = (req: MessageShape<DescMethodUnary["input"]>, ctx: HandlerContext) => unknown;

/** The content type of a Connect unary request this path serves: binary or JSON, or undefined for anything else. */
export function connectUnaryFormat(req: NodeRequest): "binary" | "json" | undefined {
  if (req.method !== "POST") return undefined;
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding !== "identity") return undefined;
  const version = req.headers["connect-protocol-version"];
  if (version !== undefined && version !== "1") return undefined;
  const raw = req.headers["content-type"];
  if (raw === undefined) return undefined;
  const type = mediaTypeOf(raw);
  if (type === "application/proto") return "binary";
  if (type === "application/json") {
    // Connect accepts JSON in UTF-8 only.
    const params = raw.indexOf(";");
    if (params >= 0 && !/charset\s*=\s*"?utf-?8"?/i.test(raw.slice(params))) return undefined;
    return "json";
  }
  return undefined;
}

/** The media type of a Content-Type value: lower-cased, without its parameters. */
export function mediaTypeOf(contentType: string): string {
  const semi = contentType.indexOf(";");
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** parseTimeout's answer for a call without a grpc-timeout header. */
const NO_TIMEOUT: ReturnType<typeof parseGrpcTimeout> = { timeoutMs: undefined };

const CONTENT_TYPE = { binary: "application/proto", json: "application/json" } as const;

/**
 * Whether `req` is a gRPC unary call this path serves: HTTP/2, POST, binary, uncompressed, and
 * `body` exactly one uncompressed message envelope. Anything else goes to Connect-ES's handler.
 */
export function isLeanGrpc(req: NodeRequest, body: Uint8Array): boolean {
  if (req.method !== "POST" || req.httpVersionMajor !== 2) return false;
  const encoding = req.headers["grpc-encoding"];
  if (encoding !== undefined && encoding !== "identity") return false;
  const raw = req.headers["content-type"];
  if (raw === undefined) return false;
  const type = mediaTypeOf(raw);
  if (type !== "application/grpc" && type !== "application/grpc+proto") return false;
  return body.byteLength >= 5 && body[0] === 0 && new DataView(body.buffer, body.byteOffset, 5).getUint32(1) === body.byteLength - 5;
}

/**
 * One gRPC unary call (HTTP/2, binary, uncompressed, one message; see isLeanGrpc), served without
 * Connect-ES's universal handler, as Connect-ES's gRPC handler answers: HEADERS with
 * `content-type: application/grpc+proto`, one message envelope, trailers with `grpc-status`
 * (and `grpc-message`, the error's metadata and details on an error).
 */
export async function serveGrpcUnary(
  method: DescMethodUnary,
  impl: UnaryImpl,
  req: NodeRequest,
  res: NodeResponse,
  body: Uint8Array,
  extraHeaders: OutgoingHttpHeaders,
  values: ContextValues,
  shutdownSignal: AbortSignal,
): Promise<void> {
  const rawTimeout = req.headers["grpc-timeout"];
  const timeout = rawTimeout === undefined ? NO_TIMEOUT : parseGrpcTimeout(Array.isArray(rawTimeout) ? rawTimeout[0] ?? null : rawTimeout, Number.MAX_SAFE_INTEGER);
  const ctx = new ServerCallContext("grpc", method, req, res, timeout.timeoutMs, values, shutdownSignal);
  let out: Uint8Array | undefined;
  let error: ConnectError | undefined;
  try {
    if (timeout.error) throw timeout.error;
    let input: MessageShape<typeof method.input>;
    try {
      input = fromBinary(method.input, body.subarray(5));
    } catch (e) {
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.InvalidArgument);
    }
    const message = toBinary(method.output, create(method.output, (await impl(input, ctx)) as MessageShape<typeof method.output>));
    out = Buffer.allocUnsafe(5 + message.byteLength);
    out[0] = 0;
    new DataView(out.buffer, out.byteOffset, 5).setUint32(1, message.byteLength);
    out.set(message, 5);
  } catch (e) {
    error = e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
  } finally {
    ctx.abort(error);
  }
  if (res.writableEnded || res.destroyed) return;
  const headers = extraHeaders;
  ctx.writeResponseHeaders(headers, false);
  headers["content-type"] = "application/grpc+proto";
  let trailers: Record<string, string>;
  if (error === undefined && !ctx.hasTrailers()) {
    trailers = { "grpc-status": "0" }; // what setTrailerStatus writes for success, without a Headers
  } else {
    const trailer = new Headers();
    ctx.writeTrailers(trailer);
    setTrailerStatus(trailer, error);
    trailers = {};
    trailer.forEach((value, key) => {
      trailers[key] = value;
    });
  }
  res.writeHead(200, headers);
  res.addTrailers(trailers);
  if (out === undefined) res.end();
  else (res as ServerResponse).end(out);
}

/**
 * One Connect unary call (POST, binary or JSON, uncompressed: every call a runtime client makes
 * with the Connect protocol), served without Connect-ES's universal handler: the request is
 * decoded, the guarded implementation called with a `ServerCallContext`, and the answer written
 * as one response with its content length, exactly as Connect's handler would write it (errors as
 * Connect's JSON error body with the HTTP status of the code and the error's metadata as headers).
 * A body that is not a valid message is `invalid_argument`.
 */
export async function serveConnectUnary(
  method: DescMethodUnary,
  impl: UnaryImpl,
  format: "binary" | "json",
  req: NodeRequest,
  res: NodeResponse,
  body: Uint8Array,
  /** The body's size, or the larger one its content-length declared (then `body` was not read). */
  size: number,
  extraHeaders: OutgoingHttpHeaders,
  values: ContextValues,
  shutdownSignal: AbortSignal,
  readMaxBytes: number,
  /** The types JSON may find in a `google.protobuf.Any` (the mounted services' files). */
  json: { readonly registry: Registry },
): Promise<void> {
  const rawTimeout = req.headers["connect-timeout-ms"];
  const timeout = Array.isArray(rawTimeout) ? rawTimeout[0] : rawTimeout;
  const ctx = new ServerCallContext("connect", method, req, res, timeout === undefined ? undefined : Number(timeout), values, shutdownSignal);
  let status = 200;
  let out: Uint8Array;
  let contentType: string = CONTENT_TYPE[format];
  let error: ConnectError | undefined;
  try {
    if (timeout !== undefined && !/^\d{1,10}$/.test(timeout)) {
      throw new ConnectError(`protocol error: invalid connect timeout value: ${timeout}`, Code.InvalidArgument);
    }
    if (size > readMaxBytes) {
      throw new ConnectError(`message size ${size} is larger than configured readMaxBytes ${readMaxBytes}`, Code.ResourceExhausted);
    }
    let input: MessageShape<typeof method.input>;
    try {
      input = format === "binary" ? fromBinary(method.input, body) : fromJsonString(method.input, Buffer.from(body).toString("utf8"), json);
    } catch (e) {
      throw new ConnectError(`parse ${format}: ${e instanceof Error ? e.message : String(e)}`, Code.InvalidArgument);
    }
    const output = create(method.output, (await impl(input, ctx)) as MessageShape<typeof method.output>);
    out = format === "binary" ? toBinary(method.output, output) : Buffer.from(toJsonString(method.output, output, json), "utf8");
  } catch (e) {
    // As Connect's handler: a ConnectError as it is, anything else as "internal error".
    error = e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
    status = codeToHttpStatus(error.code);
    contentType = "application/json";
    out = errorToJsonBytes(error, undefined);
  } finally {
    ctx.abort(error);
  }
  if (res.writableEnded || res.destroyed) return;
  const headers = extraHeaders;
  ctx.writeResponseHeaders(headers, true);
  error?.metadata.forEach((value, key) => {
    headers[key] = value;
  });
  headers["content-type"] = contentType;
  headers["content-length"] = out.byteLength;
  res.writeHead(status, headers);
  (res as ServerResponse).end(out);
}

/**
 * The handler context of a networked Connect unary call, with the behaviour of Connect's
 * `createHandlerContext` but not its cost (three `Headers`, two linked AbortControllers and a
 * deadline timer per call, and a DOMException built when it is aborted at the end): headers are
 * built when a handler reads them; the signal exists once a handler reads `ctx.signal`, and then
 * aborts when the client goes away, at the deadline (DeadlineExceeded), at shutdown, and when the
 * call is over.
 */
export class ServerCallContext extends UnaryHandlerContext implements HandlerContext {
  readonly service: DescService;
  private headers: Headers | undefined;
  private onShutdown: (() => void) | undefined;
  private onClose: (() => void) | undefined;

  constructor(
    readonly protocolName: "connect" | "grpc",
    readonly method: DescMethodUnary,
    private readonly req: NodeRequest,
    private readonly res: NodeResponse,
    timeoutMs: number | undefined,
    readonly values: ContextValues,
    private readonly shutdownSignal: AbortSignal,
  ) {
    super(timeoutMs);
    this.service = method.parent;
  }

  get url(): string {
    const host = "authority" in this.req ? this.req.authority : this.req.headers.host;
    return `http://${host ?? "localhost"}${this.req.url ?? "/"}`;
  }

  get requestHeader(): Headers {
    if (this.headers === undefined) {
      const h = new Headers();
      const raw = this.req.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i]!;
        if (name.charCodeAt(0) !== 58 /* ":" */) h.append(name, raw[i + 1]!);
      }
      this.headers = h;
    }
    return this.headers;
  }

  /** Adds the headers a handler set to `out`, and with `trailersAsHeaders` its trailers as `trailer-<name>` (Connect unary's way). */
  writeResponseHeaders(out: OutgoingHttpHeaders, trailersAsHeaders: boolean): void {
    this.response?.forEach((value, key) => {
      out[key] = value;
    });
    if (trailersAsHeaders) {
      this.trailer?.forEach((value, key) => {
        out[`trailer-${key}`] = value;
      });
    }
  }

  /** Whether a handler asked for its response trailers (it may have set some). */
  hasTrailers(): boolean {
    return this.trailer !== undefined;
  }

  /** Appends the trailers a handler set to `out`. */
  writeTrailers(out: Headers): void {
    this.trailer?.forEach((value, key) => {
      out.append(key, value);
    });
  }

  protected endedBefore(): { reason: unknown } | undefined {
    if (this.shutdownSignal.aborted) return { reason: this.shutdownSignal.reason };
    if (this.res.destroyed) return { reason: clientGone() };
    return undefined;
  }

  protected listen(stop: (reason: unknown) => void): void {
    const { shutdownSignal, res } = this;
    this.onShutdown = () => stop(shutdownSignal.reason);
    shutdownSignal.addEventListener("abort", this.onShutdown);
    this.onClose = () => stop(clientGone());
    res.once("close", this.onClose);
  }

  protected unlisten(): void {
    if (this.onShutdown) this.shutdownSignal.removeEventListener("abort", this.onShutdown);
    if (this.onClose) this.res.off("close", this.onClose);
  }
}

function clientGone(): ConnectError {
  return new ConnectError("the client closed the call", Code.Canceled);
}
