import type { Layout, Location } from "./layout.js";

// A placement as a topology file (topologies/topology.schema.json) that `pnpm dev <file>` and
// `pnpm study --deployments <file>` run as is: loopback addresses in a block of their own, Connect
// over HTTP/1.1 between processes, direct calls inside one.

export interface TopologyFileOptions {
  readonly name: string;
  readonly description: string;
  /** Where the browser sits (the largest share of players). */
  readonly browser: Location;
  /** The first group's port; the others follow (streams at port + 1000, as the repository's topologies). */
  readonly basePort: number;
  /** The "$schema" reference, relative to where the file is written. */
  readonly schemaRef: string;
  /** Engine processes (shards) at the engine's place; above 1 they need a snapshot store (Redis). */
  readonly engines?: number;
}

export interface TopologyFile {
  readonly $schema: string;
  readonly name: string;
  readonly description: string;
  readonly inProcess: "direct";
  readonly network: { readonly protocol: "connect"; readonly format: "binary"; readonly httpVersion: "1.1" };
  readonly groups: Readonly<Record<string, { readonly components: readonly string[]; readonly region: string; readonly zone: string; readonly address: string }>>;
  readonly browser: Location;
}

export function topologyFile(layout: Layout, options: TopologyFileOptions): TopologyFile {
  const groups: Record<string, TopologyFile["groups"][string]> = {};
  let port = options.basePort;
  const engines = options.engines ?? 1;
  for (const g of layout) {
    const shards = engines > 1 && g.components.includes("engine") && g.components.length === 1 ? engines : 1;
    for (let i = 1; i <= shards; i++) {
      const name = shards > 1 ? `${g.name}-${i}` : g.name;
      groups[name] = { components: [...g.components], region: g.region, zone: g.zone, address: `127.0.0.1:${port++}` };
    }
  }
  return {
    $schema: options.schemaRef,
    name: options.name,
    description: options.description,
    inProcess: "direct",
    network: { protocol: "connect", format: "binary", httpVersion: "1.1" },
    groups,
    browser: options.browser,
  };
}
