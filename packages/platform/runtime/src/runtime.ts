import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type ServiceImpl, type Transport } from "@connectrpc/connect";
import type { ComponentDefinition, ComponentName } from "@flaplab/component";
import type { ServiceSigner } from "@flaplab/identity";
import type { CallLog, CallMode } from "./call-log.js";
import {
  closeConnections,
  directTransport,
  networkTransport,
  openConnections,
  protocolLabel,
  serializedTransport,
  type CallSite,
  type Connections,
} from "./clients.js";
import type { TokenVerifier } from "@flaplab/identity";
import type { Tracer } from "@opentelemetry/api";
import { guardService } from "./guard.js";
import { findGroup, groupOf, networkFor, type GroupSpec, type Topology } from "./topology.js";

export interface RuntimeOptions {
  readonly topology: Topology;
  /** The process group this process serves. */
  readonly group: string;
  /** Checks the credential of every call to a protected method: players' tokens and component credentials. */
  readonly verifier: TokenVerifier;
  /**
   * Signs the component credential every call a component makes carries. Without one, calls
   * forward the player's token, and other components' internal methods refuse them.
   */
  readonly serviceSigner?: ServiceSigner | undefined;
  /** Deadline of a call between components that sets none, ms (default 10 s). */
  readonly callTimeoutMs?: number | undefined;
  /** Extra trusted CA certificates (PEM) for groups reached at https:// call URLs. */
  readonly trustedCa?: string | Buffer | ReadonlyArray<string | Buffer> | undefined;
  /** Where call records go; nowhere when omitted. */
  readonly callLog?: CallLog;
  /** Largest message accepted in serialized and networked modes (default 1 MiB). */
  readonly readMaxBytes?: number;
  /**
   * Traces every call (a client span per outgoing call, a server span per handled one, W3C trace
   * context carried between them in every call mode). Without one, tracing is off and costs nothing.
   */
  readonly tracer?: Tracer | undefined;
}

/** A component mounted in this process, with its guarded implementation. */
export interface MountedComponent {
  readonly definition: ComponentDefinition;
  readonly impl: ServiceImpl<DescService>;
}

/** How a call from this process to a component travels. */
export interface EdgePlan {
  readonly mode: Exclude<CallMode, "external">;
  readonly protocol: string;
  readonly httpVersion: string;
  readonly targetGroup: GroupSpec;
}

export interface Runtime {
  readonly topology: Topology;
  readonly group: GroupSpec;
  /** Serves `definition` in this process. It must be placed in this process's group. */
  mount<S extends DescService>(definition: ComponentDefinition<S>, impl: ServiceImpl<S>): void;
  readonly mounted: readonly MountedComponent[];
  /**
   * A typed client of `target` for `caller` (a component of this group, or any other name for a
   * caller outside the topology, such as a test). The call mode comes from the topology.
   */
  client<S extends DescService>(target: ComponentDefinition<S>, caller: ComponentName | string, options?: ClientOptions): Client<S>;
  plan(target: ComponentName, caller: ComponentName | string, targetGroup?: string): EdgePlan;
  close(): void;
}

export interface ClientOptions {
  /**
   * The group to call, for a component that runs in several (the engine); default the first
   * group that runs it.
   */
  readonly group?: string;
}

export const DEFAULT_READ_MAX_BYTES = 1024 * 1024;
export const DEFAULT_CALL_TIMEOUT_MS = 10_000;

export function createRuntime(options: RuntimeOptions): Runtime {
  const { topology, verifier } = options;
  const group = findGroup(topology, options.group);
  const log: CallLog = options.callLog ?? (() => {});
  const readMaxBytes = options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES;
  const mounted = new Map<ComponentName, MountedComponent>();
  const connections = new Map<string, Connections>();
  let closed = false;

  function plan(target: ComponentName, caller: string, groupName?: string): EdgePlan {
    const targetGroup = groupName === undefined ? groupOf(topology, target) : findGroup(topology, groupName);
    if (!targetGroup) throw new Error(`topology ${topology.name} does not place ${target}`);
    if (!targetGroup.components.includes(target)) throw new Error(`group ${targetGroup.name} of topology ${topology.name} does not run ${target}`);
    if (targetGroup.name === group.name) {
      return { mode: group.inProcess, protocol: group.inProcess === "direct" ? "in-process" : "connect+proto", httpVersion: "", targetGroup };
    }
    const net = networkFor(topology, caller, target);
    return { mode: "networked", protocol: protocolLabel(net), httpVersion: net.httpVersion, targetGroup };
  }

  function resolveLocal(target: ComponentDefinition): MountedComponent {
    const m = mounted.get(target.name);
    if (!m) {
      throw new ConnectError(`${target.name} is placed in this process but not mounted`, Code.Unavailable);
    }
    return m;
  }

  function transportFor(target: ComponentDefinition, caller: string, groupName?: string): Transport {
    const p = plan(target.name, caller, groupName);
    const site: CallSite = {
      caller,
      callerGroup: group,
      target,
      ...p,
      log,
      serviceSigner: options.serviceSigner,
      defaultTimeoutMs: options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      tracer: options.tracer,
    };
    if (p.mode === "direct") {
      return directTransport(site, () => resolveLocal(target).impl);
    }
    if (p.mode === "serialized") {
      let inner: Transport | undefined;
      const lazy = (): Transport => (inner ??= serializedTransport(site, resolveLocal(target).impl, readMaxBytes));
      return {
        unary: (...args) => lazy().unary(...args),
        stream: (...args) => lazy().stream(...args),
      };
    }
    const key = p.targetGroup.name;
    let conn = connections.get(key);
    if (!conn) {
      conn = openConnections(p.targetGroup.callUrl, { ca: options.trustedCa });
      connections.set(key, conn);
    }
    return networkTransport(site, networkFor(topology, caller, target.name), conn, readMaxBytes);
  }

  /** Targets of the clients made for callers not mounted yet (checked against their definitions at mount). */
  const clientsOf = new Map<string, Set<string>>();

  return {
    topology,
    group,
    mount(definition, impl) {
      if (!group.components.includes(definition.name)) {
        throw new Error(`topology ${topology.name} places ${definition.name} outside group ${group.name}`);
      }
      if (mounted.has(definition.name)) throw new Error(`${definition.name} is mounted twice`);
      for (const target of clientsOf.get(definition.name) ?? []) checkDeclaredCall(definition, target);
      const guarded = guardService(
        definition,
        impl,
        verifier,
        group,
        log,
        options.callLog === undefined ? undefined : { log: options.callLog, topology },
        options.tracer,
      );
      mounted.set(definition.name, { definition, impl: guarded as unknown as ServiceImpl<DescService> });
    },
    get mounted() {
      return [...mounted.values()];
    },
    client(target, caller, clientOptions) {
      if (closed) throw new Error("runtime is closed");
      const definition = mounted.get(caller as ComponentName)?.definition;
      if (definition !== undefined) checkDeclaredCall(definition, target.name);
      else clientsOf.set(caller, (clientsOf.get(caller) ?? new Set()).add(target.name));
      return createClient(target.service, transportFor(target, caller, clientOptions?.group));
    },
    plan,
    close() {
      closed = true;
      for (const c of connections.values()) closeConnections(c);
      connections.clear();
    },
  };
}

/** A component is given clients only of the components its definition says it calls (when it says). */
function checkDeclaredCall(caller: ComponentDefinition, target: string): void {
  if (caller.calls !== undefined && !(caller.calls as readonly string[]).includes(target)) {
    throw new Error(`component ${caller.name} is given a client of ${target}, but its definition's calls are [${caller.calls.join(", ")}]`);
  }
}
