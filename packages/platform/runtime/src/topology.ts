import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { z } from "zod";

/** How a call between two processes travels. */
export interface NetworkSettings {
  readonly protocol: "connect" | "grpc" | "grpc-web";
  /** Message encoding; gRPC is always binary. */
  readonly format: "binary" | "json";
  /** "2" is HTTP/2 without TLS (h2c); gRPC needs it. */
  readonly httpVersion: "1.1" | "2";
}

/** How a call between two components of the same process travels. */
export type InProcessMode = "direct" | "serialized";

export interface GroupSpec {
  readonly name: string;
  readonly components: readonly ComponentName[];
  readonly region: string;
  readonly zone: string;
  /** host:port the group's server listens on. */
  readonly address: string;
  /** Base URL browsers use for this group (defaults to http://address). */
  readonly publicUrl: string;
  /**
   * Base URL other groups call this group at (defaults to http://address). A group in another
   * cloud region is called at its public https endpoint.
   */
  readonly callUrl: string;
  /**
   * host:port of the group's WebTransport stream server, used when the group runs the engine or
   * music (defaults to the address's port + 1000).
   */
  readonly streamAddress: string;
  /** Base URL browsers open streams at (defaults to https://streamAddress). */
  readonly streamPublicUrl: string;
  readonly inProcess: InProcessMode;
}

export interface Topology {
  readonly name: string;
  readonly description: string;
  readonly groups: readonly GroupSpec[];
  readonly network: NetworkSettings;
  /** Per-edge overrides, keyed "caller->callee" by component name. */
  readonly edges: ReadonlyMap<string, NetworkSettings>;
  /** Where the browser sits, for latency emulation. */
  readonly browser: { readonly region: string; readonly zone: string };
  /** Where the web client is served in development (default 127.0.0.1:5173). */
  readonly web: { readonly address: string; readonly publicUrl: string };
  /** The file it was read from, if any. */
  readonly source?: string | undefined;
}

export class TopologyError extends Error {
  override readonly name = "TopologyError";
}

const DEFAULT_NETWORK: NetworkSettings = { protocol: "connect", format: "binary", httpVersion: "1.1" };

/**
 * Components a topology may run in several groups: the engine (each group one engine, games
 * placed on them by the initiator and continued from the snapshot store).
 */
export const SHARDABLE_COMPONENTS: readonly ComponentName[] = ["engine"];

/** The group that runs `component` (the first, for a component in several groups), if any. */
export function groupOf(topology: Topology, component: ComponentName): GroupSpec | undefined {
  return topology.groups.find((g) => g.components.includes(component));
}

/** Every group that runs `component`, in the file's order. */
export function groupsOf(topology: Topology, component: ComponentName): GroupSpec[] {
  return topology.groups.filter((g) => g.components.includes(component));
}

export function findGroup(topology: Topology, name: string): GroupSpec {
  const group = topology.groups.find((g) => g.name === name);
  if (!group) {
    const known = topology.groups.map((g) => g.name).join(", ");
    throw new TopologyError(`topology ${topology.name} has no group "${name}" (groups: ${known})`);
  }
  return group;
}

/** The network settings for calls from `caller` to `callee` when they run in different processes. */
export function networkFor(topology: Topology, caller: string, callee: ComponentName): NetworkSettings {
  return topology.edges.get(`${caller}->${callee}`) ?? topology.network;
}

/**
 * Reads a topology file. `nameOrPath` is a path to a JSON file, or the name of one in `searchDir`
 * (the repository's topologies/ folder).
 */
export async function loadTopology(nameOrPath: string, searchDir?: string): Promise<Topology> {
  const looksLikePath = nameOrPath.endsWith(".json") || nameOrPath.includes("/");
  const path = looksLikePath
    ? isAbsolute(nameOrPath) ? nameOrPath : resolve(nameOrPath)
    : resolve(searchDir ?? "topologies", `${nameOrPath}.json`);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new TopologyError(
      code === "ENOENT" ? `no topology file at ${path}` : `cannot read topology ${path}: ${String(err)}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TopologyError(`topology ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseTopology(json, path);
}

/** Validates a topology object (as found in a topology file) and fills in defaults. */
export function parseTopology(json: unknown, source?: string): Topology {
  const where = source ?? "topology";
  const fail = (msg: string): never => {
    throw new TopologyError(`${where}: ${msg}`);
  };
  const parsed = TopologyFileSchema.safeParse(json);
  if (!parsed.success) return fail(describeIssue(parsed.error.issues[0]!));
  const file = parsed.data;
  const network = networkSettings(file.network, DEFAULT_NETWORK, `"network"`, fail);
  const topInProcess = file.inProcess ?? "direct";

  const seen = new Map<ComponentName, string>();
  const addresses = new Set<string>();
  const groups: GroupSpec[] = [];
  for (const [groupName, g] of Object.entries(file.groups)) {
    for (const c of g.components) {
      const other = seen.get(c);
      if (other && !SHARDABLE_COMPONENTS.includes(c)) {
        fail(`component "${c}" is placed in two groups: "${other}" and "${groupName}" (only ${SHARDABLE_COMPONENTS.join(", ")} may run in several)`);
      }
      if (other && g.components.length > 1) {
        fail(`group "${groupName}": a second ${c} must run alone in its group (the first is in "${other}")`);
      }
      seen.set(c, groupName);
    }
    const address = g.address;
    if (addresses.has(address)) fail(`group "${groupName}": address ${address} is used by another group`);
    addresses.add(address);
    const host = address.slice(0, address.lastIndexOf(":"));
    const { port } = parseAddress(address);
    const streamAddress = g.streamAddress ?? `${host}:${port === 0 ? 0 : port + 1000}`;
    if (!isHostPort(streamAddress)) fail(`group "${groupName}": streamAddress "${streamAddress}" must be host:port`);
    if (addresses.has(streamAddress) && streamAddress !== `${host}:0`) {
      fail(`group "${groupName}": stream address ${streamAddress} is used by another group`);
    }
    addresses.add(streamAddress);
    groups.push({
      name: groupName,
      components: [...g.components],
      region: g.region ?? "local",
      zone: g.zone ?? "a",
      address,
      publicUrl: g.publicUrl ?? `http://${address}`,
      callUrl: (g.callUrl ?? `http://${address}`).replace(/\/+$/, ""),
      streamAddress,
      streamPublicUrl: g.streamPublicUrl ?? `https://${streamAddress}`,
      inProcess: g.inProcess ?? topInProcess,
    });
  }
  for (const c of COMPONENT_NAMES) {
    if (!seen.has(c)) fail(`component "${c}" is not placed in any group`);
  }

  const edges = new Map<string, NetworkSettings>();
  for (const [key, raw] of Object.entries(file.edges ?? {})) {
    edges.set(key, networkSettings(raw, network, `edge "${key}"`, fail));
  }
  const webAddress = file.web?.address ?? "127.0.0.1:5173";
  return {
    name: file.name,
    description: file.description ?? "",
    groups,
    network,
    edges,
    browser: { region: file.browser?.region ?? "local", zone: file.browser?.zone ?? "a" },
    web: { address: webAddress, publicUrl: file.web?.publicUrl ?? `http://${webAddress}/` },
    source,
  };
}

type Fail = (msg: string) => never;

/** Settings of a "network" object over the settings it inherits, with gRPC's constraints. */
function networkSettings(file: NetworkFile | undefined, base: NetworkSettings, what: string, fail: Fail): NetworkSettings {
  const settings: NetworkSettings = {
    protocol: file?.protocol ?? base.protocol,
    format: file?.format ?? base.format,
    httpVersion: file?.httpVersion ?? base.httpVersion,
  };
  if (settings.protocol === "grpc" && settings.httpVersion !== "2") fail(`${what}: gRPC needs httpVersion "2"`);
  if (settings.protocol === "grpc" && settings.format === "json") fail(`${what}: gRPC is binary only`);
  return settings;
}

function isHostPort(value: string): boolean {
  return /^[^\s:]+:\d{1,5}$/.test(value) && parseAddress(value).port <= 65535;
}

/** A topology's `host:port` address (a bracketed IPv6 host loses its brackets). */
export function parseAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(address.slice(i + 1)) };
}

/** A message for a schema issue: where it is (group, edge, section) and what is wrong. */
function describeIssue(issue: z.core.$ZodIssue): string {
  // A bad key of "groups" or "edges": the key's own message names it.
  if (issue.code === "invalid_key") return issue.issues[0]?.message ?? issue.message;
  const [section, key] = issue.path;
  const join = (where: string) => (issue.message.startsWith("must be") ? `${where} ${issue.message}` : `${where}: ${issue.message}`);
  if (section === "groups" && key !== undefined) return join(`group "${String(key)}"`);
  if (section === "edges" && key !== undefined) return join(`edge "${String(key)}"`);
  if ((section === "web" || section === "browser") && key !== undefined) return join(`"${section}"`);
  return issue.message;
}

// ---- The topology file's schema. topologies/topology.schema.json is generated from it
// (`pnpm --filter @flaplab/runtime topology-schema`); a test keeps the two in step.

/** A non-empty string; `name` is the key it stands under, for messages. */
const text = (name: string, required = false) =>
  z
    .string({
      error: (iss) => (iss.input === undefined && required ? `"${name}" is required` : `"${name}" must be a non-empty string`),
    })
    .min(1, { error: `"${name}" must be a non-empty string` });

const hostPort = (name: string, required: boolean) =>
  z
    .string({
      error: (iss) =>
        iss.input === undefined && required ? `"${name}" (host:port) is required` : `"${name}" must be a host:port string`,
    })
    .refine(isHostPort, { error: (iss) => `${name} "${String(iss.input)}" must be host:port` })
    .meta({ description: "host:port", pattern: "^[^\\s:]+:\\d{1,5}$" });

const pre = (what: string | undefined) => (what === undefined ? "" : `${what}: `);

const section = (what: string) => ({ error: `${what} must be an object` });

const inProcessSchema = (what: string) =>
  z
    .enum(["direct", "serialized"], { error: `${what} must be "direct" or "serialized"` })
    .meta({ description: "How calls between components of one process travel: direct function calls or serialized messages." });

/** `what` prefixes the messages ("network"); an edge's are prefixed where the issue is described. */
const NetworkSchema = (what?: string) =>
  z
    .strictObject(
      {
        protocol: z.enum(["connect", "grpc", "grpc-web"], { error: `${pre(what)}protocol must be "connect", "grpc" or "grpc-web"` }).optional(),
        format: z.enum(["binary", "json"], { error: `${pre(what)}format must be "binary" or "json"` }).optional(),
        httpVersion: z
          .enum(["1.1", "2"], { error: `${pre(what)}httpVersion must be "1.1" or "2"` })
          .optional()
          .meta({ description: '"2" is HTTP/2 without TLS (h2c); gRPC needs it.' }),
      },
      {
        error: (iss) =>
          iss.code === "unrecognized_keys" ? `${pre(what)}unknown key "${iss.keys[0]}"` : `${what ?? ""} must be an object`.trimStart(),
      },
    )
    .meta({ description: "How a call between two processes travels." });
type NetworkFile = z.infer<ReturnType<typeof NetworkSchema>>;

const GroupSchema = z
  .object(
    {
      components: z
        .array(
          z.enum(COMPONENT_NAMES, {
            error: (iss) => `unknown component ${JSON.stringify(iss.input)} (known: ${COMPONENT_NAMES.join(", ")})`,
          }),
          { error: `"components" must be an array` },
        )
        .meta({ description: "The components this group's process runs." }),
      address: hostPort("address", true).meta({ description: "host:port the group's server listens on." }),
      region: text("region").optional(),
      zone: text("zone").optional(),
      publicUrl: text("publicUrl").optional().meta({ description: "Base URL browsers use for this group (default http://address)." }),
      callUrl: text("callUrl")
        .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
          error: (iss) => (URL.canParse(String(iss.input)) ? "callUrl must be http or https" : `callUrl "${String(iss.input)}" is not a URL`),
        })
        .optional()
        .meta({ description: "Base URL other groups call this group at (default http://address)." }),
      streamAddress: hostPort("streamAddress", false)
        .optional()
        .meta({ description: "host:port of the group's stream server (default: the address's port + 1000)." }),
      streamPublicUrl: text("streamPublicUrl").optional().meta({ description: "Base URL browsers open streams at." }),
      inProcess: inProcessSchema(`"inProcess"`).optional(),
    },
    { error: "must be an object" },
  );

export const TopologyFileSchema = z
  .object(
    {
      $schema: z.string().optional(),
      name: text("name", true),
      description: text("description").optional(),
      inProcess: inProcessSchema(`"inProcess"`).optional(),
      network: NetworkSchema(`"network"`).optional(),
      groups: z.record(
        z.string().regex(/^[a-z][a-z0-9-]*$/, { error: (iss) => `group name "${String(iss.input)}" must match [a-z][a-z0-9-]*` }),
        GroupSchema,
        section(`"groups"`),
      ),
      edges: z
        .record(
          z
            .string()
            .regex(new RegExp(`^(${COMPONENT_NAMES.join("|")})->(${COMPONENT_NAMES.join("|")})$`), {
              error: (iss) => `edge "${String(iss.input)}" must be "caller->callee" with component names`,
            }),
          NetworkSchema(),
          section(`"edges"`),
        )
        .optional()
        .meta({ description: 'Per-edge network overrides, keyed "caller->callee" by component name.' }),
      browser: z
        .object({ region: text("region").optional(), zone: text("zone").optional() }, section(`"browser"`))
        .optional()
        .meta({ description: "Where the browser sits, for latency emulation." }),
      web: z
        .object({ address: hostPort("address", false).optional(), publicUrl: text("publicUrl").optional() }, section(`"web"`))
        .optional()
        .meta({ description: "Where the web client is served in development (default 127.0.0.1:5173)." }),
    },
    section("the top level"),
  )
  .meta({ title: "FlapLab topology", description: "Which components run in which process, where, and how they call each other." });

/** The JSON Schema of topology files, as the text of topologies/topology.schema.json. */
export function topologySchemaText(): string {
  const schema = z.toJSONSchema(TopologyFileSchema, { io: "input", target: "draft-2020-12" });
  return `${JSON.stringify(schema, null, 2)}\n`;
}
