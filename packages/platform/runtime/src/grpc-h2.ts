import { constants, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { create, fromBinary, toBinary, type DescMessage, type DescMethodUnary, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type UnaryResponse } from "@connectrpc/connect";
import { codeFromHttpStatus, findTrailerError, parseContentType } from "@connectrpc/connect/protocol-grpc";
import type { Http2SessionManager } from "@connectrpc/connect-node";
import { deadlineExceeded } from "@flaplab/component";
import { CallOutcome, fromNodeError } from "./call-outcome.js";
import type { LeanCall } from "./lean-call.js";
import { UnaryCallResponse } from "./unary-response.js";

/** How close to its deadline a call reset by the server counts as having reached it, ms. */
const DEADLINE_SLACK_MS = 5;

export interface GrpcH2Options {
  /** The callee group's call URL (http:// for h2c, https:// for h2 over TLS). */
  readonly baseUrl: string;
  /** The group's HTTP/2 session (Connect-ES's manager: connects, pings, reconnects, closes when idle). */
  readonly sessions: Http2SessionManager;
  readonly readMaxBytes: number;
}

/**
 * gRPC unary calls (binary) over HTTP/2 to one group, each written as Connect-ES's gRPC transport
 * writes it, on the same session manager, but without its per-call linked AbortControllers, deadline signal,
 * async-iterable pipeline and header copies: one HEADERS frame and one DATA frame with the message
 * envelope out; the answer's message and `grpc-status` (headers or trailers) read as Connect-ES
 * reads them (`findTrailerError`: message, code, details, metadata).
 */
export function grpcH2Caller(opts: GrpcH2Options): LeanCall {
  const prefix = new URL(opts.baseUrl).pathname.replace(/\/$/, "");
  return async (method, message, header, signal, timeoutMs) => {
    const bytes = toBinary(method.input, message);
    const body = Buffer.allocUnsafe(5 + bytes.byteLength);
    body[0] = 0;
    body.writeUInt32BE(bytes.byteLength, 1);
    body.set(bytes, 5);
    const headers: OutgoingHttpHeaders = { "content-type": "application/grpc+proto", te: "trailers" };
    if (timeoutMs !== undefined) headers["grpc-timeout"] = `${Math.max(1, Math.ceil(timeoutMs))}m`;
    header.forEach((value, key) => {
      headers[key] = value;
    });
    if (signal?.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
    let stream: Awaited<ReturnType<Http2SessionManager["request"]>>;
    try {
      stream = await opts.sessions.request("POST", `${prefix}/${method.parent.typeName}/${method.name}`, headers, {});
    } catch (err) {
      throw fromNodeError(err);
    }
    return new Promise((resolve, reject) => {
      let responseHeaders: IncomingHttpHeaders | undefined;
      let trailers: IncomingHttpHeaders | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const call = new CallOutcome(resolve, reject, signal, () => {
        if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
      });
      stream.on("response", (h) => (responseHeaders = h));
      stream.on("trailers", (t) => (trailers = t));
      stream.on("data", (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > opts.readMaxBytes + 5) {
          call.fail(new ConnectError(`message size is larger than configured readMaxBytes ${opts.readMaxBytes}`, Code.ResourceExhausted));
          return;
        }
        chunks.push(chunk);
      });
      // A server enforcing the call's deadline may reset the stream (CANCEL, before its
      // trailers, with or without its headers) just before this side's timer runs: that is the
      // deadline, as it would have been a moment later.
      const deadlineReset = (): boolean =>
        trailers === undefined && stream.rstCode === constants.NGHTTP2_CANCEL && call.nearDeadline(DEADLINE_SLACK_MS);
      stream.on("error", (err) => call.fail(deadlineReset() ? deadlineExceeded() : fromNodeError(err)));
      stream.on("close", () => {
        if (deadlineReset()) {
          call.fail(deadlineExceeded());
          return;
        }
        call.succeed(() => readAnswer(method, stream.rstCode, responseHeaders, trailers, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
      });
      if (call.start(timeoutMs)) stream.end(body);
    });
  };
}

function toHeaders(h: IncomingHttpHeaders | undefined): Headers {
  const out = new Headers();
  if (h === undefined) return out;
  for (const [key, value] of Object.entries(h)) {
    if (key.startsWith(":") || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(key, v);
    else out.set(key, String(value));
  }
  return out;
}

function readAnswer<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  rstCode: number | undefined,
  responseHeaders: IncomingHttpHeaders | undefined,
  trailerHeaders: IncomingHttpHeaders | undefined,
  bytes: Buffer,
): UnaryResponse<I, O> {
  if (responseHeaders === undefined) {
    throw resetError(rstCode) ?? new ConnectError("the stream closed without a response", Code.Unavailable);
  }
  const header = toHeaders(responseHeaders);
  const status = Number(responseHeaders[":status"] ?? 0);
  if (status !== 200) {
    throw new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header);
  }
  const contentType = responseHeaders["content-type"];
  if (contentType !== "application/grpc+proto" && contentType !== "application/grpc" && parseContentType(contentType ?? null) === undefined) {
    throw new ConnectError(`unsupported content type ${contentType ?? "(none)"}`, Code.Unknown, header);
  }
  if (trailerHeaders === undefined) {
    // Trailers-only: the status is in the headers, and there is no body.
    const error = bytes.byteLength === 0 ? findTrailerError(header) : undefined;
    if (error !== undefined) throw error;
    throw resetError(rstCode) ?? new ConnectError("protocol error: missing trailer", Code.Internal);
  }
  const trailer = toHeaders(trailerHeaders);
  const error = findTrailerError(trailer);
  if (error !== undefined) {
    header.forEach((value, key) => {
      error.metadata.append(key, value);
    });
    throw error;
  }
  if (trailerHeaders["grpc-status"] === undefined) throw new ConnectError("protocol error: missing status", Code.Internal);
  if (bytes.byteLength < 5 || bytes[0] !== 0 || bytes.readUInt32BE(1) !== bytes.byteLength - 5) throw envelopeError(bytes);
  let message: MessageShape<O>;
  try {
    message = fromBinary(method.output, bytes.subarray(5));
  } catch (e) {
    throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
  return new UnaryCallResponse(method, create(method.output, message), header, trailer);
}

/** Why a unary answer's body is not one uncompressed message envelope, as Connect-ES reports it. */
function envelopeError(bytes: Buffer): ConnectError {
  if (bytes.byteLength === 0) return new ConnectError("protocol error: missing output message for unary method", Code.Unimplemented);
  if (bytes.byteLength < 5) return new ConnectError("protocol error: premature end of stream", Code.Internal);
  const end = 5 + bytes.readUInt32BE(1);
  if (end > bytes.byteLength) return new ConnectError("protocol error: premature end of stream", Code.Internal);
  if (end < bytes.byteLength) return new ConnectError("protocol error: received extra output message for unary method", Code.Unimplemented);
  return new ConnectError(`protocol error: received a message with flags ${bytes[0]}, but no compression was negotiated`, Code.Internal);
}

/** The error of an HTTP/2 stream reset, as Connect-ES maps the codes. */
function resetError(rstCode: number | undefined): ConnectError | undefined {
  if (rstCode === undefined || rstCode === constants.NGHTTP2_NO_ERROR) return undefined;
  const text = `http/2 stream closed with error code ${rstCode}`;
  if (rstCode === constants.NGHTTP2_REFUSED_STREAM) return new ConnectError(text, Code.Unavailable);
  if (rstCode === constants.NGHTTP2_CANCEL) return new ConnectError(text, Code.Canceled);
  if (rstCode === constants.NGHTTP2_ENHANCE_YOUR_CALM) return new ConnectError(text, Code.ResourceExhausted);
  return new ConnectError(text, Code.Internal);
}
