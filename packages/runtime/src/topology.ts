import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { COMPONENT_NAMES, isComponentName, type ComponentName } from "@flaplab/component";

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

/** The group that runs `component`, if any. */
export function groupOf(topology: Topology, component: ComponentName): GroupSpec | undefined {
  return topology.groups.find((g) => g.components.includes(component));
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
  const root = asObject(json, "the top level", fail);
  const name = optString(root, "name", fail) ?? fail(`"name" is required`);
  const network = parseNetwork(root["network"], DEFAULT_NETWORK, `"network"`, fail);
  const topInProcess = parseInProcess(root["inProcess"], "direct", `"inProcess"`, fail);

  const groupsObj = asObject(root["groups"], `"groups"`, fail);
  const seen = new Map<ComponentName, string>();
  const addresses = new Set<string>();
  const groups: GroupSpec[] = [];
  for (const [groupName, raw] of Object.entries(groupsObj)) {
    if (!/^[a-z][a-z0-9-]*$/.test(groupName)) fail(`group name "${groupName}" must match [a-z][a-z0-9-]*`);
    const g = asObject(raw, `group "${groupName}"`, fail);
    const list = g["components"];
    if (!Array.isArray(list)) fail(`group "${groupName}": "components" must be an array`);
    const components: ComponentName[] = [];
    for (const c of list as unknown[]) {
      if (!isComponentName(c)) {
        fail(`group "${groupName}": unknown component ${JSON.stringify(c)} (known: ${COMPONENT_NAMES.join(", ")})`);
      }
      const c2 = c as ComponentName;
      const other = seen.get(c2);
      if (other) fail(`component "${c2}" is placed in two groups: "${other}" and "${groupName}"`);
      seen.set(c2, groupName);
      components.push(c2);
    }
    const address = optString(g, "address", fail) ?? fail(`group "${groupName}": "address" (host:port) is required`);
    if (!/^[^\s:]+:\d{1,5}$/.test(address) || Number(address.split(":")[1]) > 65535) {
      fail(`group "${groupName}": address "${address}" must be host:port`);
    }
    if (addresses.has(address)) fail(`group "${groupName}": address ${address} is used by another group`);
    addresses.add(address);
    const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
    const streamAddress = optString(g, "streamAddress", fail) ?? `${host}:${port === 0 ? 0 : port + 1000}`;
    if (!/^[^\s:]+:\d{1,5}$/.test(streamAddress) || Number(streamAddress.split(":")[1]) > 65535) {
      fail(`group "${groupName}": streamAddress "${streamAddress}" must be host:port`);
    }
    if (addresses.has(streamAddress) && streamAddress !== `${host}:0`) {
      fail(`group "${groupName}": stream address ${streamAddress} is used by another group`);
    }
    addresses.add(streamAddress);
    groups.push({
      name: groupName,
      components,
      region: optString(g, "region", fail) ?? "local",
      zone: optString(g, "zone", fail) ?? "a",
      address,
      publicUrl: optString(g, "publicUrl", fail) ?? `http://${address}`,
      callUrl: parseCallUrl(optString(g, "callUrl", fail) ?? `http://${address}`, groupName, fail),
      streamAddress,
      streamPublicUrl: optString(g, "streamPublicUrl", fail) ?? `https://${streamAddress}`,
      inProcess: parseInProcess(g["inProcess"], topInProcess, `group "${groupName}": "inProcess"`, fail),
    });
  }
  for (const c of COMPONENT_NAMES) {
    if (!seen.has(c)) fail(`component "${c}" is not placed in any group`);
  }

  const edges = new Map<string, NetworkSettings>();
  if (root["edges"] !== undefined) {
    for (const [key, raw] of Object.entries(asObject(root["edges"], `"edges"`, fail))) {
      const m = /^([a-z]+)->([a-z]+)$/.exec(key);
      if (!m || !isComponentName(m[1]) || !isComponentName(m[2])) {
        fail(`edge "${key}" must be "caller->callee" with component names`);
      }
      edges.set(key, parseNetwork(raw, network, `edge "${key}"`, fail));
    }
  }
  const browserObj = root["browser"] === undefined ? {} : asObject(root["browser"], `"browser"`, fail);
  const webObj = root["web"] === undefined ? {} : asObject(root["web"], `"web"`, fail);
  const webAddress = optString(webObj, "address", fail) ?? "127.0.0.1:5173";
  if (!/^[^\s:]+:\d{1,5}$/.test(webAddress)) fail(`"web": address "${webAddress}" must be host:port`);
  return {
    name,
    description: optString(root, "description", fail) ?? "",
    groups,
    network,
    edges,
    browser: {
      region: optString(browserObj, "region", fail) ?? "local",
      zone: optString(browserObj, "zone", fail) ?? "a",
    },
    web: { address: webAddress, publicUrl: optString(webObj, "publicUrl", fail) ?? `http://${webAddress}/` },
    source,
  };
}

type Fail = (msg: string) => never;

function asObject(value: unknown, what: string, fail: Fail): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(`${what} must be an object`);
  return value as Record<string, unknown>;
}

function optString(obj: Record<string, unknown>, key: string, fail: Fail): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || v.length === 0) fail(`"${key}" must be a non-empty string`);
  return v as string;
}

function parseCallUrl(url: string, group: string, fail: Fail): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(`group "${group}": callUrl "${url}" is not a URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") fail(`group "${group}": callUrl must be http or https`);
  return url.replace(/\/+$/, "");
}

function parseInProcess(value: unknown, fallback: InProcessMode, what: string, fail: Fail): InProcessMode {
  if (value === undefined) return fallback;
  if (value !== "direct" && value !== "serialized") fail(`${what} must be "direct" or "serialized"`);
  return value as InProcessMode;
}

function parseNetwork(value: unknown, base: NetworkSettings, what: string, fail: Fail): NetworkSettings {
  if (value === undefined) return base;
  const o = asObject(value, what, fail);
  for (const key of Object.keys(o)) {
    if (!["protocol", "format", "httpVersion"].includes(key)) fail(`${what}: unknown key "${key}"`);
  }
  const protocol = o["protocol"] ?? base.protocol;
  if (protocol !== "connect" && protocol !== "grpc" && protocol !== "grpc-web") {
    fail(`${what}: protocol must be "connect", "grpc" or "grpc-web"`);
  }
  const format = o["format"] ?? base.format;
  if (format !== "binary" && format !== "json") fail(`${what}: format must be "binary" or "json"`);
  const httpVersion = o["httpVersion"] ?? base.httpVersion;
  if (httpVersion !== "1.1" && httpVersion !== "2") fail(`${what}: httpVersion must be "1.1" or "2"`);
  if (protocol === "grpc" && httpVersion !== "2") fail(`${what}: gRPC needs httpVersion "2"`);
  if (protocol === "grpc" && format === "json") fail(`${what}: gRPC is binary only`);
  return {
    protocol: protocol as NetworkSettings["protocol"],
    format: format as NetworkSettings["format"],
    httpVersion: httpVersion as NetworkSettings["httpVersion"],
  };
}
