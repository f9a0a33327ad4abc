import rttTable from "../../topologies/rtt.json" with { type: "json" };

/**
 * Median round-trip times between AWS regions (ms), from the repository's dated RTT table
 * (topologies/rtt.json: cloudping.co's one-year P50 snapshot), the same data the local latency
 * emulation uses. Imported as JSON so bundlers (SST's esbuild) carry it along.
 */
export const REGION_RTT_MS: Readonly<Record<string, Readonly<Record<string, number>>>> = rttTable.regions;

/** Median RTT between two different regions of the table; undefined otherwise. */
export function regionRttMs(a: string, b: string): number | undefined {
  return a === b ? undefined : REGION_RTT_MS[a]?.[b];
}
