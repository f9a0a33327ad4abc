import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import {
  create,
  fromBinary,
  fromJsonString,
  toBinary,
  toJsonString,
  type DescMessage,
  type DescMethodUnary,
  type MessageShape,
  type Registry,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type UnaryResponse } from "@connectrpc/connect";
import { codeFromHttpStatus, errorFromJsonBytes, parseContentType, trailerDemux } from "@connectrpc/connect/protocol-connect";
import type { Agent } from "node:http";
import { CallOutcome, fromNodeError } from "./call-outcome.js";
import type { LeanCall } from "./lean-call.js";
import { UnaryCallResponse } from "./unary-response.js";

export interface ConnectH1Options {
  /** The callee group's call URL (http:// or https://). */
  readonly baseUrl: string;
  readonly agent: Agent;
  readonly binary: boolean;
  readonly readMaxBytes: number;
  /** Types a JSON message may hold in a `google.protobuf.Any` (see jsonRegistryOf). */
  readonly registry?: Registry | undefined;
}

/**
 * Connect unary calls over HTTP/1.1 to one group (the default network setting of topologies), each
 * written as Connect-ES's client would write it, but as one request with its content length:
 * headers and body leave in one write (Connect-ES's Node client flushes the headers first, so a call costs two
 * writes on the caller and two wake-ups of the callee), and without Connect-ES's per-call linked
 * AbortControllers, async iterables and response header copies. Errors are read as Connect-ES
 * reads them (the JSON error body, or the HTTP status), with the response headers as metadata.
 */
export function connectH1Caller(opts: ConnectH1Options): LeanCall {
  const base = opts.baseUrl.replace(/\/$/, "");
  const send = base.startsWith("https:") ? httpsRequest : httpRequest;
  const json = { registry: opts.registry };
  return (method, message, header, signal, timeoutMs) => {
    const body = opts.binary ? toBinary(method.input, message) : Buffer.from(toJsonString(method.input, message, json), "utf8");
    const headers: OutgoingHttpHeaders = {
      "content-type": opts.binary ? "application/proto" : "application/json",
      "connect-protocol-version": "1",
      "content-length": body.byteLength,
    };
    if (timeoutMs !== undefined) headers["connect-timeout-ms"] = String(Math.max(0, Math.floor(timeoutMs)));
    header.forEach((value, key) => {
      headers[key] = value;
    });
    const url = `${base}/${method.parent.typeName}/${method.name}`;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: "POST", headers, agent: opts.agent });
      const call = new CallOutcome(resolve, reject, signal, () => req.destroy());
      req.on("error", (err) => call.fail(fromNodeError(err)));
      req.on("response", (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > opts.readMaxBytes) {
            call.fail(new ConnectError(`message size ${size} is larger than configured readMaxBytes ${opts.readMaxBytes}`, Code.ResourceExhausted));
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", (err) => call.fail(fromNodeError(err)));
        res.on("end", () => call.succeed(() => readAnswer(opts.binary, json, method, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))));
      });
      if (call.start(timeoutMs)) req.end(body);
    });
  };
}

function readAnswer<I extends DescMessage, O extends DescMessage>(
  binary: boolean,
  json: { readonly registry: Registry | undefined },
  method: DescMethodUnary<I, O>,
  res: IncomingMessage,
  bytes: Buffer,
): UnaryResponse<I, O> {
  const all = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) all.append(key, v);
    else all.set(key, value);
  }
  const [header, trailer] = trailerDemux(all);
  const status = res.statusCode ?? 0;
  const type = (res.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (status !== 200) {
    const metadata = new Headers(header);
    trailer.forEach((value, key) => {
      metadata.append(key, value);
    });
    const fallback = new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), metadata);
    if (type !== "application/json") throw fallback;
    throw errorFromJsonBytes(bytes, metadata, fallback);
  }
  const expected = binary ? "application/proto" : "application/json";
  if (type !== expected) {
    // As Connect-ES: a content type that is not Connect's at all is `unknown`, the other codec's `internal`.
    const raw = res.headers["content-type"];
    const code = parseContentType(raw ?? null) === undefined ? Code.Unknown : Code.Internal;
    throw new ConnectError(`unexpected response content type "${raw ?? ""}"`, code, header);
  }
  if (res.headers["content-encoding"] !== undefined && res.headers["content-encoding"] !== "identity") {
    throw new ConnectError(`unexpected response encoding "${res.headers["content-encoding"]}"`, Code.Internal);
  }
  let message: MessageShape<O>;
  try {
    message = binary ? fromBinary(method.output, bytes) : fromJsonString(method.output, bytes.toString("utf8"), json);
  } catch (e) {
    throw new ConnectError(`parse ${binary ? "binary" : "json"}: ${e instanceof Error ? e.message : String(e)}`, Code.Internal);
  }
  return new UnaryCallResponse(method, create(method.output, message), header, trailer);
}
