import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import type { Client, ServiceImpl } from "@connectrpc/connect";
import { COMPONENT_NAMES, type ComponentDefinition, type ComponentName } from "@flaplab/component";
import { createHost, type Host } from "@flaplab/host";
import { openLocalIdentity, type ServiceSigner, type Signer } from "@flaplab/identity";
import { createRuntime, parseTopology, type CallRecord, type Runtime, type Topology } from "@flaplab/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe } from "vitest";
import { freePorts } from "@flaplab/ports";

/** Every mode a contract suite runs in. Test names carry the mode. */
export const CONTRACT_MODES = ["direct", "serialized", "networked-connect-h1", "networked-grpc-h2c"] as const;
export type ContractMode = (typeof CONTRACT_MODES)[number];

/** What a component factory gets in a contract test. */
export interface ContractEnv {
  readonly mode: ContractMode;
  /** A fresh directory for this mode. */
  readonly dataDir: string;
  /** Signs tokens the runtime accepts. */
  readonly signer: Signer;
  /** A client of another component, as the component being created calls it. */
  client<S extends DescService>(target: ComponentDefinition<S>): Client<S>;
}

export interface ComponentUnderTest<S extends DescService = DescService> {
  readonly component: ComponentDefinition<S>;
  readonly create: (env: ContractEnv) => ServiceImpl<S> | Promise<ServiceImpl<S>>;
}

export interface ContractSpec<S extends DescService> extends ComponentUnderTest<S> {
  /**
   * The component that calls this one in a deployment. When set, `t.client` and `t.as(...)` carry
   * its component credential acting for the player on internal methods (as they require) and the
   * player's own token on the others (which are for players); otherwise the player's token on all.
   */
  readonly caller?: ComponentName;
  /** Components the one under test calls; mounted with it, as the mode places them. */
  readonly peers?: readonly ComponentUnderTest<DescService>[];
}

/** What a suite gets; valid inside tests and hooks (after the mode has started). */
export interface ContractContext<S extends DescService> {
  readonly mode: ContractMode;
  /** A client acting for "alice": the spec's caller acting for her, or her own token. */
  readonly client: Client<S>;
  /** Like `client`, acting for `username`. */
  as(username: string): Promise<Client<S>>;
  /** A client sending `token` (none when undefined). */
  clientAs(token: string | undefined): Client<S>;
  /** A client carrying the credential of component `caller` for the component under test, acting for `username` (none when omitted). */
  asComponent(caller: ComponentName, username?: string): Promise<Client<S>>;
  /** A valid token for `username`. */
  token(username: string): Promise<string>;
  /** Signs component credentials the runtime accepts. */
  readonly serviceSigner: ServiceSigner;
  /** Call records written so far in this mode. */
  readonly calls: readonly CallRecord[];
  /** The base URL of the component under test in networked modes, undefined otherwise. */
  readonly baseUrl: string | undefined;
  readonly signer: Signer;
}

const TESTER = "tester";

/**
 * Runs `suite` once per call mode: direct, serialized (in-process protobuf), and networked over
 * real loopback sockets (Connect over HTTP/1.1, gRPC over h2c). The suite does not change.
 */
export function describeContract<S extends DescService>(
  spec: ContractSpec<S>,
  suite: (t: ContractContext<S>) => void,
): void {
  for (const mode of CONTRACT_MODES) {
    describe(`${spec.component.name} contract [${mode}]`, () => {
      let setup: ModeSetup<S> | undefined;
      beforeAll(async () => {
        setup = await startMode(spec, mode);
      }, 30_000);
      afterAll(async () => {
        await setup?.stop();
      });
      const need = (): ModeSetup<S> => {
        if (!setup) throw new Error("contract mode not started (use the context inside tests)");
        return setup;
      };
      suite({
        mode,
        get client() {
          return need().client;
        },
        clientAs: (token) => need().clientAs(token),
        as: (username) => need().as(username),
        asComponent: async (caller, username) =>
          need().clientAs(await need().serviceSigner.tokenFor(caller, spec.component.name, username)),
        get serviceSigner() {
          return need().serviceSigner;
        },
        token: async (username) => (await need().signer.sign(username)).token,
        get calls() {
          return need().records;
        },
        get baseUrl() {
          return need().baseUrl;
        },
        get signer() {
          return need().signer;
        },
      });
    });
  }
}

interface ModeSetup<S extends DescService> {
  client: Client<S>;
  clientAs(token: string | undefined): Client<S>;
  as(username: string): Promise<Client<S>>;
  signer: Signer;
  serviceSigner: ServiceSigner;
  records: CallRecord[];
  baseUrl: string | undefined;
  stop(): Promise<void>;
}

async function startMode<S extends DescService>(spec: ContractSpec<S>, mode: ContractMode): Promise<ModeSetup<S>> {
  const dataDir = await mkdtemp(join(tmpdir(), `flaplab-${spec.component.name}-${mode}-`));
  const { signer, serviceSigner, verifier } = await openLocalIdentity(join(dataDir, "identity"));
  const records: CallRecord[] = [];
  const units = [spec as unknown as ComponentUnderTest, ...(spec.peers ?? [])];
  const topology = await topologyFor(mode, units.map((u) => u.component.name));
  const logger = pino({ level: "silent" });

  const runtimes = new Map<string, Runtime>();
  const runtimeFor = (groupName: string): Runtime => {
    let rt = runtimes.get(groupName);
    if (!rt) {
      rt = createRuntime({ topology, group: groupName, verifier, serviceSigner, callLog: (r) => records.push(r) });
      runtimes.set(groupName, rt);
    }
    return rt;
  };
  const groupNameOf = (name: ComponentName): string =>
    topology.groups.find((g) => g.components.includes(name))!.name;

  for (const unit of units) {
    const rt = runtimeFor(groupNameOf(unit.component.name));
    const env: ContractEnv = {
      mode,
      dataDir,
      signer,
      client: (target) => rt.client(target, unit.component.name),
    };
    rt.mount(unit.component, await unit.create(env));
  }

  const hosts: Host[] = [];
  if (mode.startsWith("networked")) {
    for (const unit of units) {
      const host = await createHost({ runtime: runtimeFor(groupNameOf(unit.component.name)), logger });
      await host.listen();
      hosts.push(host);
    }
  }
  const tester = runtimeFor(mode.startsWith("networked") ? TESTER : "all");
  // Internal methods by their client names ("recordRun"): the ones the caller's credential is for.
  const internal = new Set(spec.component.service.methods.filter((m) => spec.component.internalMethods.includes(m.name)).map((m) => m.localName));
  const clientAs = (token: string | undefined): Client<S> => {
    const client = tester.client(spec.component, TESTER);
    if (token === undefined) return client;
    return withAuthorization(client, () => token);
  };
  /** A client acting for `username`: the caller's credential on internal methods, the player's token on the rest. */
  const actingFor = async (username: string): Promise<Client<S>> => {
    const player = (await signer.sign(username)).token;
    const component = spec.caller !== undefined ? await serviceSigner.tokenFor(spec.caller, spec.component.name, username) : player;
    return withAuthorization(tester.client(spec.component, TESTER), (method) => (internal.has(method) ? component : player));
  };
  const testedGroup = topology.groups.find((g) => g.name === groupNameOf(spec.component.name))!;
  return {
    client: await actingFor("alice"),
    clientAs,
    as: actingFor,
    signer,
    serviceSigner,
    records,
    baseUrl: mode.startsWith("networked") ? testedGroup.publicUrl : undefined,
    async stop() {
      for (const rt of runtimes.values()) rt.close();
      await Promise.all(hosts.map((h) => h.close()));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Wraps every method of a client so each call carries `name: value` unless it sets the header itself. */
/** `client` sending `authorization: Bearer <token of the method>` on every call that sets none. */
function withAuthorization<S extends DescService>(client: Client<S>, tokenOf: (method: string) => string): Client<S> {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const fn = Reflect.get(target, prop, receiver) as unknown;
      if (typeof fn !== "function") return fn;
      return (req: unknown, options?: { headers?: ConstructorParameters<typeof Headers>[0] }) => {
        const headers = new Headers(options?.headers);
        if (!headers.has("authorization")) headers.set("authorization", `Bearer ${tokenOf(String(prop))}`);
        return (fn as (r: unknown, o: unknown) => unknown).call(target, req, { ...options, headers });
      };
    },
  });
}

async function topologyFor(mode: ContractMode, mountedNames: ComponentName[]): Promise<Topology> {
  if (mode === "direct" || mode === "serialized") {
    return parseTopology({
      name: `contract-${mode}`,
      inProcess: mode,
      groups: { all: { components: [...COMPONENT_NAMES], address: "127.0.0.1:1" } },
    });
  }
  // Every group gets its stream address from the pool too: the default (its port + 1000) could
  // be another group's free port.
  const ports = await freePorts(2 * (mountedNames.length + 2));
  const at = (i: number) => ({ address: `127.0.0.1:${ports[2 * i]}`, streamAddress: `127.0.0.1:${ports[2 * i + 1]}` });
  const groups: Record<string, { components: string[]; address: string; streamAddress: string }> = {};
  mountedNames.forEach((name, i) => {
    groups[`g-${name}`] = { components: [name], ...at(i) };
  });
  groups["rest"] = { components: COMPONENT_NAMES.filter((c) => !mountedNames.includes(c)), ...at(mountedNames.length) };
  groups[TESTER] = { components: [], ...at(mountedNames.length + 1) };
  const network = mode === "networked-grpc-h2c"
    ? { protocol: "grpc", format: "binary", httpVersion: "2" }
    : { protocol: "connect", format: "binary", httpVersion: "1.1" };
  return parseTopology({ name: `contract-${mode}`, network, groups });
}
