import type { ComponentName } from "@flaplab/component";
import { groupsOf, type GroupSpec, type Topology } from "@flaplab/runtime";
import { edgeRtt, oneWayDelays, type EdgeKind, type RttTable } from "./rtt.js";

/** Who calls whom: FlappyGo's call graph. */
export const CALL_GRAPH: ReadonlyArray<readonly [ComponentName, ComponentName]> = [
  ["initiator", "worldgen"],
  ["initiator", "engine"],
  ["engine", "music"],
  ["engine", "score"],
];

/**
 * What a browser connects to: Connect endpoints, the two stream servers, and the engine's and
 * music's RPC ports, where the plain WebSocket link of their streams is served.
 */
export const BROWSER_TARGETS: ReadonlyArray<{ component: ComponentName; port: "connect" | "stream" }> = [
  { component: "auth", port: "connect" },
  { component: "initiator", port: "connect" },
  { component: "score", port: "connect" },
  { component: "engine", port: "stream" },
  { component: "music", port: "stream" },
  { component: "engine", port: "connect" },
  { component: "music", port: "connect" },
];

export interface PlanEdgeOptions {
  /**
   * Proxy the browser's links even between groups on one host (no latency added): so that a
   * link can be cut on purpose (`pnpm study --fault link-cut@<tick>`).
   */
  readonly browserLinksOnOneHost?: boolean;
}

/** One link that gets its own proxy: from a process group (or the browser) to a group's port. */
export interface PlannedEdge {
  /** Unique, e.g. "initiator->worldgen" or "browser->engine:stream". */
  readonly name: string;
  /** The calling group, or "browser". */
  readonly from: string;
  readonly to: string;
  readonly port: "connect" | "stream";
  /** host:port the traffic really goes to. */
  readonly upstream: string;
  readonly kind: EdgeKind;
  readonly rttMs: number;
  readonly jitterMs: number;
  readonly upstreamMs: number;
  readonly downstreamMs: number;
}

/**
 * Every link between different processes (and from the browser) with its emulated RTT. Links
 * between groups on the same host ("local" region) are left out: nothing to add.
 */
export function planEdges(topology: Topology, table: RttTable, options: PlanEdgeOptions = {}): PlannedEdge[] {
  const edges = new Map<string, PlannedEdge>();
  const add = (from: string, fromPlace: { region: string; zone: string }, to: GroupSpec, port: "connect" | "stream") => {
    const rtt = edgeRtt(table, fromPlace, to);
    if (rtt.kind === "same-host" && !(from === "browser" && options.browserLinksOnOneHost)) return;
    const name = port === "connect" ? `${from}->${to.name}` : `${from}->${to.name}:stream`;
    if (edges.has(name)) return;
    edges.set(name, {
      name,
      from,
      to: to.name,
      port,
      upstream: port === "connect" ? to.address : to.streamAddress,
      ...rtt,
      ...oneWayDelays(rtt.rttMs),
    });
  };
  // Every group of a component that runs in several (the engine's shards) gets its own links.
  for (const [caller, callee] of CALL_GRAPH) {
    for (const from of groupsOf(topology, caller)) {
      for (const to of groupsOf(topology, callee)) if (from.name !== to.name) add(from.name, from, to, "connect");
    }
  }
  for (const target of BROWSER_TARGETS) {
    for (const to of groupsOf(topology, target.component)) add("browser", topology.browser, to, target.port);
  }
  return [...edges.values()];
}
