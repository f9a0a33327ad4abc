import type { Topology } from "@flaplab/runtime";
import { CALL_GRAPH } from "../calls.js";
import { regionRttMs } from "../rtt.js";
import { type StageNames, privateUrl, publicUrl } from "./naming.js";
import { type Placement, placesOf } from "./placement.js";
import type { CallEdgePlan } from "./types.js";

// The calls between process groups, and the URL each caller dials.

/** Every call of the call graph between two different groups, and a warning for each edge the load balancers cannot carry. */
export function planEdges(
  topology: Topology,
  placement: Placement,
  names: StageNames,
): { readonly edges: CallEdgePlan[]; readonly warnings: string[] } {
  const edges: CallEdgePlan[] = [];
  const warnings: string[] = [];
  for (const from of placement.groups) {
    for (const caller of from.spec.components) {
      for (const callee of CALL_GRAPH[caller]) for (const to of placesOf(placement, callee)) {
        if (to === from) continue;
        const crossRegion = to.region !== from.region;
        const network = topology.edges.get(`${caller}->${callee}`) ?? topology.network;
        const rtt = crossRegion ? regionRttMs(from.region, to.region) : undefined;
        edges.push({
          caller,
          callee,
          from: from.name,
          to: to.name,
          crossRegion,
          crossZone: !crossRegion && to.zone !== from.zone,
          // Across regions, the callee's public HTTPS endpoint; within one, its Cloud Map name.
          url: crossRegion ? publicUrl(names, to.spec.name) : privateUrl(names.stage, to.name),
          network,
          ...(rtt === undefined ? {} : { rttMs: rtt }),
        });
        if (crossRegion && network.protocol === "grpc") {
          warnings.push(
            `${caller}->${callee} is gRPC across regions; the load balancer forwards HTTP/1.1 to targets, so use connect or grpc-web on that edge`,
          );
        }
      }
    }
  }
  return { edges, warnings };
}
