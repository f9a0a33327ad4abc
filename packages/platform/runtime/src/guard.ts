import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import {
  isComponentName,
  principalKey,
  runInCall,
  type CallContext,
  type ComponentDefinition,
  type Principal,
} from "@flaplab/component";
import { parseBearer, type TokenVerifier } from "@flaplab/identity";
import type { Tracer } from "@opentelemetry/api";
import type { CallLog, CallRecord } from "./call-log.js";
import { contextOfSpan, endSpan, extractTrace, startServerSpan, traceparentOf } from "./call-tracing.js";
import { CALLER_HEADER, DirectContext, inProcessCallKey } from "./direct-context.js";
import { type GroupSpec, groupOf, type Topology } from "./topology.js";


// The caller header ("<component>.<verb>") is believed only on calls that carry a component
// credential; any other call is logged as external.
export { CALLER_HEADER } from "./direct-context.js";

type UnaryHandler = (req: unknown, ctx: HandlerContext) => unknown;

/** The `traceparent` of a handled call's server span, for the call context of its handler. */
const servedTraceKey = createContextKey<string | undefined>(undefined, { description: "flaplab server span" });

/**
 * Wraps a component's implementation with what every call mode shares: token verification for
 * protected methods (internal ones accept only a component credential), the call context for calls
 * the handler makes, and a call record for calls from outside the topology (calls that carry a
 * component credential are logged by the calling component; with `calleeLog`, a networked one is
 * also logged here, side "server", timed from the guard to the handler's answer).
 */
export function guardService<S extends DescService>(
  def: ComponentDefinition<S>,
  impl: ServiceImpl<S>,
  verifier: TokenVerifier,
  group: GroupSpec,
  log: CallLog,
  calleeLog?: { readonly log: CallLog; readonly topology: Topology },
  tracer?: Tracer,
): ServiceImpl<S> {
  const guarded: Record<string, UnaryHandler> = {};
  const callsNobody = def.calls !== undefined && def.calls.length === 0;
  const handlers = impl as unknown as Record<string, UnaryHandler | undefined>;
  for (const method of def.service.methods) {
    const handler = handlers[method.localName];
    if (method.methodKind !== "unary") {
      throw new Error(`${def.service.typeName}/${method.name}: only unary methods are served by the runtime`);
    }
    if (!handler) throw new Error(`component ${def.name} does not implement ${method.name}`);
    const isPublic = def.publicMethods.includes(method.name);
    const isInternal = def.internalMethods.includes(method.name);
    const internalOnly = `${def.service.typeName}/${method.name} is internal: only components may call it`;
    const serve = (req: unknown, ctx: HandlerContext, principal: Principal | undefined): unknown => {
      if (principal !== undefined) ctx.values.set(principalKey, principal);
      // A component that calls nobody needs no call context, and running one would turn on
      // AsyncLocalStorage's promise hooks, a cost on every promise of the process.
      if (callsNobody) return handler.call(impl, req, ctx);
      const call: CallContext =
        tracer === undefined
          ? { component: def.name, verb: method.name, principal, gameId: gameIdOf(req) }
          : { component: def.name, verb: method.name, principal, gameId: gameIdOf(req), traceparent: ctx.values.get(servedTraceKey) };
      return runInCall(call, () => handler.call(impl, req, ctx));
    };
    /** Serves a call from outside the topology and writes its record when it ends. */
    const serveLogged = async (req: unknown, ctx: HandlerContext, started: bigint, check: () => Promise<Principal | undefined>) => {
      let code = "ok";
      try {
        return await serve(req, ctx, await check());
      } catch (err) {
        code = codeName(err);
        throw err;
      } finally {
        log(externalRecord(def, method, group, req, ctx, started, code));
      }
    };
    /**
     * Serves a call from another component. A networked one (no direct context) is also timed and
     * logged on this side when `calleeLog` is given: the caller's record minus this one is what the
     * hop (transport, HTTP, waking the processes) cost.
     */
    const serveComponent = (req: unknown, ctx: HandlerContext, principal: Principal, started: bigint, direct: DirectContext | undefined): unknown => {
      if (direct !== undefined || calleeLog === undefined || ctx.values.get(inProcessCallKey)) return serve(req, ctx, principal);
      const written = (code: string) => calleeLog.log(calleeRecord(def, method, group, calleeLog.topology, req, ctx, started, code));
      let result: unknown;
      try {
        result = serve(req, ctx, principal);
      } catch (err) {
        written(codeName(err));
        throw err;
      }
      if (!(result instanceof Promise)) {
        written("ok");
        return result;
      }
      return result.then(
        (answer: unknown) => {
          written("ok");
          return answer;
        },
        (err: unknown) => {
          written(codeName(err));
          throw err;
        },
      );
    };
    const callers = def.callers[method.name];
    const forPlayers = `${def.service.typeName}/${method.name} is for players: no component calls it`;
    const notAnEdge = `${def.service.typeName}/${method.name} may be called by ${callers?.join(", ")} only`;
    const notForMe = (principal: Principal) => `invalid token: a credential for ${principal.callee ?? "(no callee)"}, not for ${def.name}`;
    const admit = (principal: Principal): Principal => {
      if (isInternal && principal.service === undefined) throw new ConnectError(internalOnly, Code.PermissionDenied);
      // A component credential is good only at the callee it names: one captured from a call to
      // another component is refused here.
      if (principal.service !== undefined && principal.callee !== def.name) throw new ConnectError(notForMe(principal), Code.Unauthenticated);
      // Only the call graph's edges: a credential of another component is refused, whoever signed
      // it, and a method for players takes no component's.
      if (principal.service !== undefined && !isInternal) throw new ConnectError(forPlayers, Code.PermissionDenied);
      if (callers !== undefined && !(callers as readonly string[]).includes(principal.service!)) {
        throw new ConnectError(`${notAnEdge}, not by ${principal.service}`, Code.PermissionDenied);
      }
      return principal;
    };
    // Not an async function: a call with a component credential verified before is served without
    // waiting and without a promise of its own (each costs, with AsyncLocalStorage's hooks).
    const guard: UnaryHandler = (req, ctx) => {
      const started = process.hrtime.bigint();
      if (isPublic) return serveLogged(req, ctx, started, () => Promise.resolve(undefined));
      // A direct call carries its credential and caller on the context, not in headers.
      const direct = ctx instanceof DirectContext ? ctx : undefined;
      let bearer: string | undefined;
      try {
        bearer = direct !== undefined ? direct.bearer : parseBearer(ctx.requestHeader.get("authorization"));
        if (bearer === undefined) throw new ConnectError("missing bearer token", Code.Unauthenticated);
      } catch (err) {
        return serveLogged(req, ctx, started, () => Promise.reject(err));
      }
      const known = verifier.cached?.(bearer);
      // The caller header is believed only with a component credential; any other call is external.
      const fromComponent = known?.service !== undefined && (direct !== undefined || ctx.requestHeader.has(CALLER_HEADER));
      if (fromComponent) return serveComponent(req, ctx, admit(known), started, direct);
      const token = bearer;
      if (known === undefined) {
        // Not verified yet: verify, then serve; a component's call is not logged here (its caller logs it).
        const verified = verifier.verify(token);
        return verified.then(
          (principal) => {
            if (principal.service !== undefined && (direct !== undefined || ctx.requestHeader.has(CALLER_HEADER))) {
              return serveComponent(req, ctx, admit(principal), started, direct);
            }
            return serveLogged(req, ctx, started, async () => admit(principal));
          },
          (err: unknown) => serveLogged(req, ctx, started, () => Promise.reject(err)),
        );
      }
      return serveLogged(req, ctx, started, async () => admit(known));
    };
    guarded[method.localName] = tracer === undefined ? guard : traced(tracer, def, method, group, guard);
  }
  return guarded as unknown as ServiceImpl<S>;
}

/**
 * `guard` with a server span around it, a child of the caller's span: handed over in-process by a
 * direct call, else extracted from the request's trace headers. The handler's own calls are its
 * children (the span's `traceparent` goes into the call context).
 */
function traced(tracer: Tracer, def: ComponentDefinition, method: DescMethod, group: GroupSpec, guard: UnaryHandler): UnaryHandler {
  const service = def.service.typeName;
  return (req, ctx) => {
    const direct = ctx instanceof DirectContext ? ctx : undefined;
    const parent = direct !== undefined ? contextOfSpan(direct.clientSpan) : extractTrace(ctx.requestHeader);
    const caller = direct !== undefined ? direct.caller : (ctx.requestHeader.get(CALLER_HEADER) ?? undefined);
    const requestGameId = gameIdOf(req);
    const span = startServerSpan(tracer, service, method.name, def.name, group.name, caller, requestGameId, parent);
    ctx.values.set(servedTraceKey, traceparentOf(span));
    let result: unknown;
    try {
      result = guard(req, ctx);
    } catch (err) {
      endSpan(span, err);
      throw err;
    }
    // A call that makes a game (the initiator's StartGame) names it in its answer.
    const answered = (answer: unknown): unknown => {
      const gameId = requestGameId === undefined ? gameIdOf(answer) : undefined;
      if (gameId !== undefined) span.setAttribute("flaplab.game.id", gameId);
      endSpan(span, undefined);
      return answer;
    };
    if (!(result instanceof Promise)) return answered(result);
    return result.then(
      answered,
      (err: unknown) => {
        endSpan(span, err);
        throw err;
      },
    );
  };
}

function externalRecord(
  def: ComponentDefinition,
  method: DescMethod,
  group: GroupSpec,
  req: unknown,
  ctx: HandlerContext,
  started: bigint,
  code: string,
): CallRecord {
  return {
    src: "external",
    srcVerb: "-",
    dst: def.name,
    dstVerb: method.name,
    gameId: gameIdOf(req) ?? "",
    mode: ctx.protocolName === "direct" ? "direct" : "external",
    protocol: ctx.protocolName,
    httpVersion: "",
    durationNs: Number(process.hrtime.bigint() - started),
    code,
    srcGroup: "",
    dstGroup: group.name,
    srcRegion: "",
    dstRegion: group.region,
    srcZone: "",
    dstZone: group.zone,
    side: "server",
  };
}

/** The callee's record of a networked call from another component (the "<component>.<verb>" caller header). */
function calleeRecord(
  def: ComponentDefinition,
  method: DescMethod,
  group: GroupSpec,
  topology: Topology,
  req: unknown,
  ctx: HandlerContext,
  started: bigint,
  code: string,
): CallRecord {
  const caller = ctx.requestHeader.get(CALLER_HEADER) ?? "";
  const dot = caller.indexOf(".");
  const src = dot < 0 ? caller : caller.slice(0, dot);
  const srcGroup = isComponentName(src) ? groupOf(topology, src) : undefined;
  return {
    src,
    srcVerb: dot < 0 ? "-" : caller.slice(dot + 1),
    dst: def.name,
    dstVerb: method.name,
    gameId: gameIdOf(req) ?? "",
    mode: "networked",
    protocol: ctx.protocolName,
    httpVersion: "",
    durationNs: Number(process.hrtime.bigint() - started),
    code,
    srcGroup: srcGroup?.name ?? "",
    dstGroup: group.name,
    srcRegion: srcGroup?.region ?? "",
    dstRegion: group.region,
    srcZone: srcGroup?.zone ?? "",
    dstZone: group.zone,
    side: "server",
  };
}

/** The `gameId` field of a request message, when it has a non-empty one. */
export function gameIdOf(message: unknown): string | undefined {
  if (typeof message === "object" && message !== null && "gameId" in message) {
    const id = (message as { gameId: unknown }).gameId;
    if (typeof id === "string" && id !== "") return id;
  }
  return undefined;
}

/** The Connect code of an error as a lower-case name ("unauthenticated"), "ok" for none. */
export function codeName(err: unknown): string {
  return codeToString(ConnectError.from(err).code);
}
