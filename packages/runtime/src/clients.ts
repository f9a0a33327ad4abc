import { Agent } from "node:http";
import { create, type DescMessage, type DescMethodUnary, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
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
import { currentCall, isComponentName, type ComponentDefinition } from "@flaplab/component";
import type { ServiceSigner } from "@flaplab/identity";
import type { CallLog, CallMode } from "./call-log.js";
import { CALLER_HEADER, codeName, gameIdOf } from "./guard.js";
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
}

/**
 * Runs one outgoing call: a component's call carries a component credential acting for the player
 * of the call being served (other callers, such as tests, forward the player's token), names the
 * caller in a header, times the call and writes its record.
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
    if (site.serviceSigner !== undefined && isComponentName(site.caller)) {
      const token = await site.serviceSigner.tokenFor(site.caller, call?.principal?.username);
      header.set("authorization", `Bearer ${token}`);
    } else if (call?.principal) {
      header.set("authorization", `Bearer ${call.principal.token}`);
    }
  }
  const srcVerb = call && call.component === site.caller ? call.verb : "-";
  header.set(CALLER_HEADER, `${site.caller}.${srcVerb}`);
  const gameId = gameIdOf(message) ?? call?.gameId ?? "";
  const started = process.hrtime.bigint();
  let code = "ok";
  try {
    return await invoke();
  } catch (err) {
    code = codeName(err);
    throw err;
  } finally {
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
}

function observingInterceptor(site: CallSite): Interceptor {
  return (next) => async (req) =>
    observe(site, req.method.name, req.header, req.message, () => next(req));
}

type UnaryHandler = (req: unknown, ctx: HandlerContext) => Promise<unknown> | unknown;

/**
 * The handler context of a direct call, with the behaviour of Connect's `createHandlerContext`
 * but not its cost: that one links two AbortControllers and copies the request headers on every
 * call, and aborting it at the end builds a DOMException, most of a direct call's time. Here the
 * signal exists once a handler reads `ctx.signal`; it then aborts when the caller's signal does,
 * at the deadline (with DeadlineExceeded) and when the call is over, as Connect's does. A class
 * rather than closures, so that a call creates no functions: under tsx (esbuild's `keepNames`)
 * each named function created costs ≈ 0.3 µs.
 */
class DirectContext implements HandlerContext {
  readonly protocolName = "direct";
  readonly requestMethod = "POST";
  readonly service: DescService;
  readonly values: ContextValues;
  readonly timeoutMs: () => number | undefined = noTimeout;
  readonly responseHeader = new Headers();
  readonly responseTrailer = new Headers();
  private readonly deadline: number | undefined;
  private controller: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ended: { reason: unknown } | undefined;
  private onCallerAbort: (() => void) | undefined;

  constructor(
    readonly method: DescMethodUnary,
    readonly requestHeader: Headers,
    private readonly callerSignal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    contextValues: ContextValues | undefined,
  ) {
    this.service = method.parent;
    this.values = contextValues ?? createContextValues();
    if (timeoutMs !== undefined) {
      const deadline = Date.now() + timeoutMs;
      this.deadline = deadline;
      this.timeoutMs = () => deadline - Date.now();
    }
  }

  get url(): string {
    return `direct:/${this.service.typeName}/${this.method.name}`;
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    this.controller = new AbortController();
    const { callerSignal, deadline, ended } = this;
    if (ended) this.stop(ended.reason);
    else if (callerSignal?.aborted) this.stop(callerSignal.reason);
    else if (deadline !== undefined && deadline <= Date.now()) this.stop(deadlineExceeded());
    else {
      if (callerSignal) {
        this.onCallerAbort = () => this.stop(callerSignal.reason);
        callerSignal.addEventListener("abort", this.onCallerAbort);
      }
      if (deadline !== undefined) this.timer = setTimeout(() => this.stop(deadlineExceeded()), deadline - Date.now());
    }
    return this.controller.signal;
  }

  /** Ends the call: aborts the signal if a handler has it, with `reason`. */
  abort(reason?: unknown): void {
    if (this.ended) return;
    this.ended = { reason };
    this.stop(reason);
  }

  private stop(reason: unknown): void {
    clearTimeout(this.timer);
    if (this.onCallerAbort) this.callerSignal?.removeEventListener("abort", this.onCallerAbort);
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(reason);
  }
}

function noTimeout(): undefined {
  return undefined;
}

function deadlineExceeded(): ConnectError {
  return new ConnectError("the operation timed out", Code.DeadlineExceeded);
}

/**
 * Direct mode: the callee's handler is called with the request object itself. No serialization,
 * but the same token check (the handler is the guarded one) and the same call record.
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
      const requestHeader = new Headers(header);
      const message = create(method.input, input);
      return observe(site, method.name, requestHeader, message, async () => {
        const handler = (resolveImpl() as unknown as Record<string, UnaryHandler>)[method.localName];
        if (!handler) throw new ConnectError(`${method.name} is not implemented`, Code.Unimplemented);
        const ctx = new DirectContext(method, requestHeader, signal, timeoutMs ?? site.defaultTimeoutMs, contextValues);
        try {
          const output = await handler(message, ctx);
          return {
            stream: false,
            service: method.parent,
            method,
            header: ctx.responseHeader,
            trailer: ctx.responseTrailer,
            message: create(method.output, output as MessageInitShape<O>),
          };
        } catch (err) {
          throw ConnectError.from(err);
        } finally {
          ctx.abort();
        }
      });
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
  return createRouterTransport((router) => router.service(site.target.service, impl), {
    transport: { interceptors: [observingInterceptor(site)], useBinaryFormat: true, defaultTimeoutMs: site.defaultTimeoutMs },
    router: { readMaxBytes },
  });
}

/** Connections to one group, closed with the runtime. */
export interface Connections {
  readonly agent: Agent;
  readonly h2: Http2SessionManager;
}

export function openConnections(baseUrl: string): Connections {
  return { agent: new Agent({ keepAlive: true }), h2: new Http2SessionManager(baseUrl) };
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
  const baseUrl = site.targetGroup.callUrl;
  const common = {
    baseUrl,
    interceptors: [observingInterceptor(site)],
    readMaxBytes,
    useBinaryFormat: net.format === "binary",
    defaultTimeoutMs: site.defaultTimeoutMs,
  };
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

/** The protocol column of the call log for network settings. */
export function protocolLabel(net: NetworkSettings): string {
  if (net.protocol === "grpc") return "grpc";
  return `${net.protocol}+${net.format === "binary" ? "proto" : "json"}`;
}
