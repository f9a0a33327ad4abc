import { create, type DescService } from "@bufbuild/protobuf";
import { anyPack, type Any } from "@bufbuild/protobuf/wkt";
import { ConnectError, type Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  ConformancePayload_RequestInfoSchema,
  ConformancePayloadSchema,
  type ConformanceService,
  IdempotentUnaryRequestSchema,
  UnaryRequestSchema,
  type ConformancePayload_RequestInfo,
  type Error as ProtoError,
  type UnaryResponseDefinition,
} from "./gen/connectrpc/conformance/v1/service_pb.js";
import { appendProtoHeaders, toProtoHeaders } from "./headers.js";

/**
 * The conformance service's unary methods (Unary, IdempotentUnary), answering as each request's
 * response definition says: its headers, trailers, data or error, after its delay, with what the
 * server saw of the request (headers, deadline, message) echoed back. The streaming methods and
 * Unimplemented are left out: the host answers them `unimplemented`.
 */
export function conformanceUnaryImpl(): ServiceImpl<DescService> {
  const impl: Pick<ServiceImpl<typeof ConformanceService>, "unary" | "idempotentUnary"> = {
    unary: (req, ctx) => respond(req.responseDefinition, anyPack(UnaryRequestSchema, req), ctx),
    idempotentUnary: (req, ctx) => respond(req.responseDefinition, anyPack(IdempotentUnaryRequestSchema, req), ctx),
  };
  return impl as unknown as ServiceImpl<DescService>;
}

async function respond(definition: UnaryResponseDefinition | undefined, request: Any, ctx: HandlerContext) {
  if (definition !== undefined) {
    appendProtoHeaders(ctx.responseHeader, definition.responseHeaders);
    appendProtoHeaders(ctx.responseTrailer, definition.responseTrailers);
  }
  const info = requestInfo(ctx, request);
  if (definition?.response.case === "error") throw errorOf(definition.response.value, info);
  if (definition !== undefined && definition.responseDelayMs > 0) await delay(definition.responseDelayMs, ctx.signal);
  const data = definition?.response.case === "responseData" ? definition.response.value : undefined;
  return { payload: create(ConformancePayloadSchema, { requestInfo: info, ...(data === undefined ? {} : { data }) }) };
}

function requestInfo(ctx: HandlerContext, request: Any): ConformancePayload_RequestInfo {
  const timeoutMs = ctx.timeoutMs();
  return create(ConformancePayload_RequestInfoSchema, {
    requestHeaders: toProtoHeaders(ctx.requestHeader),
    requests: [request],
    ...(timeoutMs === undefined ? {} : { timeoutMs: BigInt(timeoutMs) }),
  });
}

/** The error a definition asks for, its details as sent plus the request info (as the reference server adds it). */
function errorOf(error: ProtoError, info: ConformancePayload_RequestInfo): ConnectError {
  const err = new ConnectError(error.message ?? "", error.code as number as Code);
  for (const d of error.details) err.details.push({ type: d.typeUrl.slice(d.typeUrl.lastIndexOf("/") + 1), value: d.value });
  err.details.push({ desc: ConformancePayload_RequestInfoSchema, value: info });
  return err;
}

/** Waits `ms`; fails with the call's end (its deadline, the client gone, shutdown) if that comes first. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    function stop(): void {
      clearTimeout(timer);
      reject(ConnectError.from(signal.reason));
    }
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
}
