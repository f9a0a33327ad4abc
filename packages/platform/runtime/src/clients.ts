import { Agent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { rootCertificates } from "node:tls";
import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createRouterTransport,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { currentCall, isComponentName, type CallContext, type ComponentDefinition } from "@flaplab/component";
import { parseBearer, type ServiceSigner } from "@flaplab/identity";
import type { Span, Tracer } from "@opentelemetry/api";
import type { CallLog, CallMode } from "./call-log.js";
import { endSpan, injectTrace, startClientSpan } from "./call-tracing.js";
import { connectH1Caller } from "./connect-h1.js";
import { grpcH2Caller } from "./grpc-h2.js";
import { jsonRegistryOf } from "./json-registry.js";
import type { LeanCall } from "./lean-call.js";
import { CALLER_HEADER, DirectContext, inProcessCallKey } from "./direct-context.js";
import { codeName, gameIdOf } from "./guard.js";
import type { GroupSpec, NetworkSettings } from "./topology.js";

/** One edge of the call graph, as seen by the caller. */
export interface CallSite {
  readonly caller: string;
  readonly callerGroup: GroupSpec;
  readonly target: ComponentDefinition;
  readonly targetGroup: GroupSpec;
  readonly mode: Exclude<CallMode, "external">;
  readonly protocol: string;
  readonly httpVersion: string;
  readonly log: CallLog;
  /** Signs the component credential a component's calls carry; without one, the player's token is forwarded. */
  readonly serviceSigner: ServiceSigner | undefined;
  /** Deadline of a call that sets none, ms. */
  readonly defaultTimeoutMs: number;
  /** Makes the call's client span; tracing is off without one. */
  readonly tracer: Tracer | undefined;
}

/**
 * The credential a component's call carries when the caller set none: its component credential
 * acting for the player of the call being served. Callers outside the topology (tests, the bench)
 * forward the player's token of the call being served, if any.
 */
function credentialFor(site: CallSite, call: CallContext | undefined): string | Promise<string> | undefined {
  if (site.serviceSigner !== undefined && isComponentName(site.caller)) {
    return site.serviceSigner.tokenFor(site.caller, site.target.name, call?.principal?.username);
  }
  return call?.principal?.token;
}

/** The verb of the call being served, when the caller is the component serving it. */
function sourceVerb(site: CallSite, call: CallContext | undefined): string {
  return call !== undefined && call.component === site.caller ? call.verb : "-";
}

/** The client span of a call from `site`, a child of the work the caller is doing (`call`). */
function clientSpan(tracer: Tracer, site: CallSite, verb: string, gameId: string, call: CallContext | undefined): Span {
  const edge = {
    caller: site.caller,
    callerGroup: site.callerGroup.name,
    callee: site.target.name,
    calleeGroup: site.targetGroup.name,
    mode: site.mode,
    protocol: site.protocol,
  };
  return startClientSpan(tracer, edge, site.target.service.typeName, verb, gameId, call?.traceparent);
}

function writeRecord(site: CallSite, verb: string, srcVerb: string, gameId: string, started: bigint, code: string): void {
  site.log({
    src: site.caller,
    srcVerb,
    dst: site.target.name,
    dstVerb: verb,
    gameId,
    mode: site.mode,
    protocol: site.protocol,
    httpVersion: site.httpVersion,
    durationNs: Number(process.hrtime.bigint() - started),
    code,
    srcGroup: site.callerGroup.name,
    dstGroup: site.targetGroup.name,
    srcRegion: site.callerGroup.region,
    dstRegion: site.targetGroup.region,
    srcZone: site.callerGroup.zone,
    dstZone: site.targetGroup.zone,
    side: "client",
  });
}

/**
 * Runs one outgoing call over a transport with headers: puts the credential and the caller on the
 * request, times the call and writes its record.
 */
async function observe<T>(
  site: CallSite,
  verb: string,
  header: Headers,
  message: unknown,
  invoke: () => Promise<T>,
): Promise<T> {
  const call = currentCall();
  if (!header.has("authorization")) {
    const credential = credentialFor(site, call);
    if (credential !== undefined) header.set("authorization", `Bearer ${await credential}`);
  }
  const srcVerb = sourceVerb(site, call);
  header.set(CALLER_HEADER, `${site.caller}.${srcVerb}`);
  const gameId = gameIdOf(message) ?? call?.gameId ?? "";
  const span = site.tracer === undefined ? undefined : clientSpan(site.tracer, site, verb, gameId, call);
  if (span !== undefined) injectTrace(span, header);
  const started = process.hrtime.bigint();
  let code = "ok";
  let failure: unknown;
  try {
    return await invoke();
  } catch (err) {
    code = codeName(err);
    failure = err;
    throw err;
  } finally {
    writeRecord(site, verb, srcVerb, gameId, started, code);
    if (span !== undefined) endSpan(span, failure);
  }
}

function observingInterceptor(site: CallSite): Interceptor {
  return (next) => async (req) =>
    observe(site, req.method.name, req.header, req.message, () => next(req));
}

type UnaryHandler = (req: unknown, ctx: HandlerContext) => Promise<unknown> | unknown;

/** The response of a direct call; its headers are built only if the caller reads them. */
class DirectResponse<I extends DescMessage, O extends DescMessage> implements UnaryResponse<I, O> {
  readonly stream = false as const;
  readonly service: DescService;
  constructor(
    readonly method: DescMethodUnary<I, O>,
    readonly message: MessageShape<O>,
    private readonly ctx: DirectContext,
  ) {
    this.service = method.parent;
  }
  get header(): Headers {
    return this.ctx.responseHeader;
  }
  get trailer(): Headers {
    return this.ctx.responseTrailer;
  }
}

/** The `Authorization: Bearer` token of the headers a caller passed, if any. */
function bearerIn(init: ConstructorParameters<typeof Headers>[0] | undefined): string | undefined {
  if (init === undefined) return undefined;
  let value: string | null | undefined;
  if (init instanceof Headers) value = init.get("authorization");
  else if (Array.isArray(init)) value = init.find((entry) => entry[0]?.toLowerCase() === "authorization")?.[1];
  else {
    const record = init as Record<string, string>;
    value = record["authorization"] ?? record["Authorization"];
    if (value === undefined) {
      for (const k in record) if (k.toLowerCase() === "authorization") value = record[k];
    }
  }
  return value === undefined || value === null ? undefined : parseBearer(value);
}

/**
 * Direct mode: the callee's handler is called with the request object itself. No serialization
 * and no headers, but the same token check (the handler is the guarded one, which reads the
 * credential from the context) and the same call record.
 */
export function directTransport(site: CallSite, resolveImpl: () => ServiceImpl<DescService>): Transport {
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const message = create(method.input, input);
      const call = currentCall();
      let bearer = bearerIn(header);
      if (bearer === undefined) {
        const credential = credentialFor(site, call);
        bearer = typeof credential === "object" ? await credential : credential;
      }
      const srcVerb = sourceVerb(site, call);
      const gameId = gameIdOf(message) ?? call?.gameId ?? "";
      const span = site.tracer === undefined ? undefined : clientSpan(site.tracer, site, method.name, gameId, call);
      const started = process.hrtime.bigint();
      let code = "ok";
      let failure: unknown;
      const ctx = new DirectContext(
        method,
        header,
        bearer,
        `${site.caller}.${srcVerb}`,
        signal,
        timeoutMs ?? site.defaultTimeoutMs,
        contextValues,
        span,
      );
      try {
        const handler = (resolveImpl() as unknown as Record<string, UnaryHandler>)[method.localName];
        if (!handler) throw new ConnectError(`${method.name} is not implemented`, Code.Unimplemented);
        const output = await handler(message, ctx);
        return new DirectResponse(method, create(method.output, output as MessageInitShape<O>), ctx);
      } catch (err) {
        const e = ConnectError.from(err);
        code = codeName(e);
        failure = e;
        throw e;
      } finally {
        ctx.abort();
        writeRecord(site, method.name, srcVerb, gameId, started, code);
        if (span !== undefined) endSpan(span, failure);
      }
    },
    stream() {
      return Promise.reject(new ConnectError("streaming calls are not served by the runtime", Code.Unimplemented));
    },
  };
}

/** In-process serialized mode: Connect's router transport, binary protobuf both ways. */
export function serializedTransport(
  site: CallSite,
  impl: ServiceImpl<DescService>,
  readMaxBytes: number,
): Transport {
  // Marked in-process for the callee's guard: the caller alone logs the call.
  const handlers = impl as unknown as Record<string, UnaryHandler>;
  const marked: Record<string, UnaryHandler> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    marked[name] = (req, ctx) => {
      ctx.values.set(inProcessCallKey, true);
      return handler.call(impl, req, ctx);
    };
  }
  return createRouterTransport((router) => router.service(site.target.service, marked as unknown as ServiceImpl<DescService>), {
    transport: { interceptors: [observingInterceptor(site)], useBinaryFormat: true, defaultTimeoutMs: site.defaultTimeoutMs },
    router: { readMaxBytes },
  });
}

/** Connections to one group, closed with the runtime. */
export interface Connections {
  /** HTTP/1.1 keep-alive connections (TLS ones for an https:// call URL). */
  readonly agent: Agent;
  /** One HTTP/2 session (h2c, or h2 over TLS for https://), reused by every call. */
  readonly h2: Http2SessionManager;
}

/** Idle connections to another group are closed after this long (under the host's idle timeout). */
export const CLIENT_IDLE_TIMEOUT_MS = 60_000;

export interface ConnectionOptions {
  /** Extra trusted CA certificates (PEM) for https:// call URLs; the system's are trusted too. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer> | undefined;
}

/**
 * Connections to a group's call URL. An https:// URL (a component in another region, behind a
 * load balancer) gets TLS connections that are kept alive and reused: a new handshake costs two
 * or three round trips, 120–180 ms between distant regions.
 */
export function openConnections(baseUrl: string, options: ConnectionOptions = {}): Connections {
  const tls = new URL(baseUrl).protocol === "https:";
  const ca = options.ca === undefined ? undefined : tlsRoots(options.ca);
  // Idle connections are closed by the caller before the callee's host would (120 s by default),
  // so that a call never goes out on a connection the server is closing at that moment.
  const idle = { keepAlive: true, timeout: CLIENT_IDLE_TIMEOUT_MS };
  const agent = tls ? new HttpsAgent({ ...idle, ...(ca ? { ca } : {}) }) : new Agent(idle);
  const h2 = new Http2SessionManager(baseUrl, { idleConnectionTimeoutMs: CLIENT_IDLE_TIMEOUT_MS }, tls && ca ? { ca } : undefined);
  return { agent, h2 };
}

/** The system's trusted roots plus `extra`: giving `ca` to Node replaces the defaults otherwise. */
function tlsRoots(extra: string | Buffer | ReadonlyArray<string | Buffer>): Array<string | Buffer> {
  const more = typeof extra === "string" || Buffer.isBuffer(extra) ? [extra] : [...extra];
  return [...rootCertificates, ...more];
}

export function closeConnections(c: Connections): void {
  c.agent.destroy();
  c.h2.abort();
}

/** Networked mode: Connect, gRPC or gRPC-Web over HTTP/1.1 or h2c to the callee's group. */
export function networkTransport(
  site: CallSite,
  net: NetworkSettings,
  conn: Connections,
  readMaxBytes: number,
): Transport {
  const wire = {
    baseUrl: site.targetGroup.callUrl,
    service: site.target.service,
    network: net,
    connections: conn,
    readMaxBytes,
    defaultTimeoutMs: site.defaultTimeoutMs,
  };
  return selectTransport(wire, [observingInterceptor(site)], site);
}

export interface WireOptions {
  /** The callee group's call URL (http:// for HTTP/1.1 and h2c, https:// for TLS). */
  readonly baseUrl: string;
  /** The service called (its types are what JSON may find in a `google.protobuf.Any`). */
  readonly service: DescService;
  readonly network: NetworkSettings;
  readonly connections: Connections;
  readonly readMaxBytes: number;
  /** Deadline of a call that sets none, ms; without one, such a call carries no deadline. */
  readonly defaultTimeoutMs?: number | undefined;
}

/**
 * A transport that makes calls exactly as a networked edge does (the same clients for the same
 * network settings), but outside a topology: no credential, caller header, call record or span.
 * For tools that test the wire protocols themselves (the conformance suite's client under test).
 */
export function wireTransport(opts: WireOptions): Transport {
  return selectTransport(opts, [], undefined);
}

/** The client for network settings; `site` observes the calls (credential, caller, record, span) when given. */
function selectTransport(opts: WireOptions, interceptors: Interceptor[], site: CallSite | undefined): Transport {
  const { baseUrl, network: net, connections: conn, readMaxBytes, defaultTimeoutMs } = opts;
  const registry = net.format === "json" ? jsonRegistryOf([opts.service]) : undefined;
  const common = {
    baseUrl,
    interceptors,
    readMaxBytes,
    useBinaryFormat: net.format === "binary",
    defaultTimeoutMs,
    ...(registry === undefined ? {} : { jsonOptions: { registry } }),
  };
  if (net.protocol === "connect" && net.httpVersion !== "2") {
    // The default network setting: Connect over HTTP/1.1, one write per call (connect-h1.ts).
    const h1 = { baseUrl, agent: conn.agent, binary: net.format === "binary", readMaxBytes, registry };
    return leanTransport(connectH1Caller(h1), defaultTimeoutMs, site);
  }
  if (net.protocol === "grpc" && net.format === "binary") {
    // gRPC over HTTP/2 on the group's session, one HEADERS and one DATA frame per call (grpc-h2.ts).
    const h2 = { baseUrl, sessions: conn.h2, readMaxBytes };
    return leanTransport(grpcH2Caller(h2), defaultTimeoutMs, site);
  }
  const http = net.httpVersion === "2"
    ? { httpVersion: "2" as const, sessionManager: conn.h2 }
    : { httpVersion: "1.1" as const, nodeOptions: { agent: conn.agent } };
  switch (net.protocol) {
    case "connect":
      return createConnectTransport({ ...common, ...http });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, ...http });
    case "grpc":
      return createGrpcTransport({ ...common, sessionManager: conn.h2 });
  }
}

/** A unary-only transport over one of the runtime's own clients, observed like the others when a call site is given. */
function leanTransport(call: LeanCall, defaultTimeoutMs: number | undefined, site: CallSite | undefined): Transport {
  return {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: MessageInitShape<I>,
    ): Promise<UnaryResponse<I, O>> {
      const message = create(method.input, input);
      const headers = new Headers(header);
      const invoke = () => call(method, message, headers, signal, timeoutMs ?? defaultTimeoutMs);
      return site === undefined ? invoke() : observe(site, method.name, headers, message, invoke);
    },
    stream() {
      return Promise.reject(new ConnectError("streaming calls are not served by the runtime", Code.Unimplemented));
    },
  };
}

/** The protocol column of the call log for network settings. */
export function protocolLabel(net: NetworkSettings): string {
  if (net.protocol === "grpc") return "grpc";
  return `${net.protocol}+${net.format === "binary" ? "proto" : "json"}`;
}
