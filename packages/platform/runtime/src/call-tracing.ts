import {
  type Attributes,
  type Context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
  TraceFlags,
  type Tracer,
} from "@opentelemetry/api";
import { ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";

// Spans of the runtime's calls. Only reached when the runtime was given a tracer: with tracing off
// a call makes no span, carries no trace header and does no context work.

/** What a client span says about its edge. */
export interface TracedEdge {
  readonly caller: string;
  readonly callerGroup: string;
  readonly callee: string;
  readonly calleeGroup: string;
  readonly mode: string;
  /** Protocol label of the edge ("connect+proto", "grpc", "in-process"). */
  readonly protocol: string;
}

const headersSetter: TextMapSetter<Headers> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

const headersGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of a span: how the runtime keeps a trace context in a call context or a game. */
export function traceparentOf(span: Span): string {
  const sc = span.spanContext();
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? "01" : "00"}`;
}

/** The context whose remote parent `traceparent` names (the root context for none or a malformed one). */
export function contextOf(traceparent: string | undefined): Context {
  if (traceparent === undefined) return ROOT_CONTEXT;
  const m = TRACEPARENT.exec(traceparent);
  if (m === null || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 0xff, isRemote: true });
}

function rpcSystem(protocol: string): string {
  return protocol === "grpc" ? "grpc" : "connect_rpc";
}

/**
 * Starts the client span of a call from `edge.caller` to `service/method`, a child of the span the
 * caller's work belongs to (`parent`, a `traceparent`), or a root span.
 */
export function startClientSpan(
  tracer: Tracer,
  edge: TracedEdge,
  service: string,
  method: string,
  gameId: string,
  parent: string | undefined,
): Span {
  const attributes: Attributes = {
    "rpc.system": rpcSystem(edge.protocol),
    "rpc.service": service,
    "rpc.method": method,
    "flaplab.call.mode": edge.mode,
    "flaplab.protocol": edge.protocol,
    "flaplab.caller": edge.caller,
    "flaplab.caller.group": edge.callerGroup,
    "flaplab.callee": edge.callee,
    "flaplab.callee.group": edge.calleeGroup,
  };
  if (gameId !== "") attributes["flaplab.game.id"] = gameId;
  return tracer.startSpan(`${service}/${method}`, { kind: SpanKind.CLIENT, attributes }, contextOf(parent));
}

/** Puts the span's trace context on outgoing request headers (`traceparent`, `tracestate`, per OTEL_PROPAGATORS). */
export function injectTrace(span: Span, headers: Headers): void {
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), headers, headersSetter);
}

/** The trace context a request's headers carry (the root context for none). */
export function extractTrace(headers: Headers): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headersGetter);
}

/** The context of an in-process caller's client span. */
export function contextOfSpan(span: Span | undefined): Context {
  return span === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, span);
}

/** Starts the server span of a handled call, a child of the caller's span in `parent`. */
export function startServerSpan(
  tracer: Tracer,
  service: string,
  method: string,
  component: string,
  group: string,
  /** The caller header ("<component>.<verb>"), if the call has one. */
  caller: string | undefined,
  gameId: string | undefined,
  parent: Context,
): Span {
  const attributes: Attributes = {
    "rpc.system": "connect_rpc",
    "rpc.service": service,
    "rpc.method": method,
    "flaplab.callee": component,
    "flaplab.callee.group": group,
  };
  if (caller !== undefined && caller !== "") {
    // The caller header: "<component>.<verb>".
    const dot = caller.indexOf(".");
    attributes["flaplab.caller"] = dot < 0 ? caller : caller.slice(0, dot);
    if (dot >= 0) attributes["flaplab.caller.verb"] = caller.slice(dot + 1);
  }
  if (gameId !== undefined) attributes["flaplab.game.id"] = gameId;
  return tracer.startSpan(`${service}/${method}`, { kind: SpanKind.SERVER, attributes }, parent);
}

/** Ends a call's span: status error with the Connect code when the call failed. */
export function endSpan(span: Span, err: unknown): void {
  if (err !== undefined) {
    const e = ConnectError.from(err);
    span.setAttribute("rpc.connect_rpc.error_code", codeToString(e.code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e.rawMessage });
  }
  span.end();
}
