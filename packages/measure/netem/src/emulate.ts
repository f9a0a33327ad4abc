import { groupOf, type Topology } from "@flaplab/runtime";
import { type PlanEdgeOptions, planEdges, type PlannedEdge } from "./plan.js";
import type { RttTable } from "./rtt.js";
import { startTlsTerminator, type TlsTerminator } from "./tls-terminator.js";
import type { Toxiproxy } from "./toxiproxy.js";

/** An edge with its proxy's listen address. */
export interface ActiveEdge extends PlannedEdge {
  readonly listen: string;
  /** The TLS listener behind the proxy, when calls on this edge go over https://. */
  readonly tls?: TlsTerminator;
}

export interface EmulateOptions extends PlanEdgeOptions {
  /**
   * Calls between regions over TLS, as in the cloud (an https:// call URL to the callee's load
   * balancer): each cross-region edge gets a TLS listener with this certificate behind its proxy,
   * so handshakes pay the emulated RTT too. Callers must trust the certificate (NODE_EXTRA_CA_CERTS).
   */
  readonly tlsBetweenRegions?: { readonly cert: string; readonly key: string };
}

export interface Emulation {
  readonly edges: readonly ActiveEdge[];
  /**
   * The topology as group `group` must see it: the other groups at the addresses of the proxies
   * on the way to them, the URLs browsers are given (streams, WebSocket streams) at their proxies. Same JSON layout
   * as a topology file.
   */
  topologyFor(group: string): Record<string, unknown>;
  /** Base URLs the browser uses for the Connect components (through their proxies). */
  browserUrl(component: "auth" | "initiator" | "score"): string;
  /** Closes the TLS listeners (the proxies belong to the toxiproxy server). */
  close(): Promise<void>;
}

/**
 * Creates one toxiproxy proxy per edge with half the RTT (and the jitter) each way, and derives
 * the per-process topologies that route every call through its proxy.
 */
export async function emulate(
  topology: Topology,
  table: RttTable,
  proxy: Toxiproxy,
  allocatePort: () => Promise<number>,
  options: EmulateOptions = {},
): Promise<Emulation> {
  const edges: ActiveEdge[] = [];
  const listeners: TlsTerminator[] = [];
  const close = () => Promise.all(listeners.map((l) => l.close())).then(() => undefined);
  try {
    for (const edge of planEdges(topology, table, options)) {
      const listen = `127.0.0.1:${await allocatePort()}`;
      const secure = options.tlsBetweenRegions && edge.from !== "browser" && edge.port === "connect" && edge.kind === "cross-region";
      const tls = secure ? await startTlsTerminator({ port: await allocatePort(), upstream: edge.upstream, ...options.tlsBetweenRegions }) : undefined;
      if (tls) listeners.push(tls);
      // The proxy adds the delay in front of the TLS listener: handshakes cross the emulated link.
      await proxy.createProxy(edge.name, listen, tls?.listen ?? edge.upstream);
      if (edge.upstreamMs > 0) await proxy.addLatency(edge.name, "upstream", edge.upstreamMs, Math.round(edge.jitterMs / 2));
      if (edge.downstreamMs > 0) await proxy.addLatency(edge.name, "downstream", edge.downstreamMs, Math.round(edge.jitterMs / 2));
      edges.push({ ...edge, listen, ...(tls ? { tls } : {}) });
    }
  } catch (err) {
    await close();
    throw err;
  }
  const find = (from: string, to: string, port: "connect" | "stream") =>
    edges.find((e) => e.from === from && e.to === to && e.port === port);
  const browserStreamUrl = (groupName: string, fallback: string) => {
    const e = find("browser", groupName, "stream");
    return e ? `https://${e.listen}` : fallback;
  };
  const browserConnectUrl = (groupName: string, fallback: string) => {
    const e = find("browser", groupName, "connect");
    return e ? `http://${e.listen}` : fallback;
  };

  return {
    edges,
    topologyFor(group) {
      const groups: Record<string, unknown> = {};
      for (const g of topology.groups) {
        const via = g.name === group ? undefined : find(group, g.name, "connect");
        groups[g.name] = {
          components: g.components,
          region: g.region,
          zone: g.zone,
          address: via?.listen ?? g.address,
          callUrl: `${via?.tls ? "https" : "http"}://${via?.listen ?? g.address}`,
          streamAddress: g.streamAddress,
          // What the initiator hands browsers (the WebSocket stream URLs) goes through their proxies too.
          publicUrl: browserConnectUrl(g.name, g.publicUrl),
          streamPublicUrl: browserStreamUrl(g.name, g.streamPublicUrl),
          inProcess: g.inProcess,
        };
      }
      // The listening group keeps its own address; proxies in front of it are for its callers.
      const edgesJson: Record<string, unknown> = {};
      for (const [key, net] of topology.edges) edgesJson[key] = net;
      return {
        name: topology.name,
        description: `${topology.description} (as seen by ${group}, through emulated latency)`,
        network: topology.network,
        edges: edgesJson,
        groups,
        browser: topology.browser,
        web: { address: topology.web.address },
      };
    },
    browserUrl(component) {
      const g = groupOf(topology, component)!;
      return browserConnectUrl(g.name, g.publicUrl);
    },
    close,
  };
}
