import type { Topology } from "@flaplab/runtime";
import { CONNECT_PORT, STREAM_PORT } from "./constants.js";
import type { ServicePlan } from "./types.js";

/**
 * The topology as one service sees it in the cloud, in the topology-file format: its own group
 * listens on all interfaces at the container ports; groups in the same region are reached at
 * their Cloud Map names; groups in other regions at their public host names (port 443).
 */
export function cloudTopology(
  topology: Topology,
  services: readonly ServicePlan[],
  self: ServicePlan,
  hosts: { readonly stage: string; readonly domain: string },
): Record<string, unknown> {
  const groups: Record<string, unknown> = {};
  for (const s of services) {
    const spec = topology.groups.find((g) => g.name === s.group)!;
    const own = s === self;
    const sameRegion = s.region === self.region;
    const dialHost = sameRegion ? s.privateHost : s.publicHost;
    groups[s.group] = {
      components: s.components,
      region: s.region,
      zone: s.zone,
      address: own ? `0.0.0.0:${CONNECT_PORT}` : `${dialHost}:${sameRegion ? CONNECT_PORT : 443}`,
      streamAddress: own ? `0.0.0.0:${STREAM_PORT}` : `${dialHost}:${STREAM_PORT}`,
      // Same region: plain HTTP to the Cloud Map name; other regions: the authenticated public https endpoint.
      callUrl: own || sameRegion ? `http://${dialHost}:${CONNECT_PORT}` : `https://${s.publicHost}`,
      // Browsers reach a group with any public route (Connect, or the streams and the plain WebSocket
      // link) at its own host; the rest only inside the VPC.
      publicUrl: s.albRoutes.length > 0 ? `https://${s.publicHost}` : s.privateUrl,
      streamPublicUrl: s.streamUrl ?? `https://${s.publicHost}`,
      inProcess: spec.inProcess,
    };
  }
  const webHost = `web.${hosts.stage}.${hosts.domain}`;
  return {
    name: topology.name,
    description: `${topology.name} in the cloud (stage ${hosts.stage}), as seen by group ${self.group}`,
    network: topology.network,
    edges: Object.fromEntries(topology.edges),
    groups,
    browser: topology.browser,
    web: { address: `${webHost}:443`, publicUrl: `https://${webHost}/` },
  };
}
