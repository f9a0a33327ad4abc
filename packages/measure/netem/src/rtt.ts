import { readFile } from "node:fs/promises";
import { resolve } from "node:path";

/** Where two ends of an edge are. Region "local" means this machine: no latency is added. */
export interface Placement {
  readonly region: string;
  readonly zone: string;
}

/** The RTT table (topologies/rtt.json): dated, sourced, replaceable. */
export interface RttTable {
  readonly source: string;
  readonly date: string;
  readonly sameZone: { readonly rttMs: number; readonly jitterMs: number };
  readonly crossZone: { readonly rttMs: number; readonly jitterMs: number };
  readonly crossRegionJitterMs: number;
  readonly regions: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export type EdgeKind = "same-host" | "same-zone" | "cross-zone" | "cross-region";

export interface EdgeRtt {
  readonly kind: EdgeKind;
  readonly rttMs: number;
  readonly jitterMs: number;
}

export const DEFAULT_RTT_FILE = resolve(import.meta.dirname, "../../../../topologies/rtt.json");

export async function loadRttTable(file: string = DEFAULT_RTT_FILE): Promise<RttTable> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new Error(`cannot read the RTT table ${file}: ${(err as Error).message}`);
  }
  const t = json as Partial<RttTable>;
  const num = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0;
  if (
    typeof t.source !== "string" || typeof t.date !== "string" ||
    !num(t.sameZone?.rttMs) || !num(t.sameZone?.jitterMs) || !num(t.crossZone?.rttMs) || !num(t.crossZone?.jitterMs) ||
    !num(t.crossRegionJitterMs) || typeof t.regions !== "object" || t.regions === null
  ) {
    throw new Error(`${file}: an RTT table needs source, date, sameZone, crossZone, crossRegionJitterMs and regions`);
  }
  for (const [a, row] of Object.entries(t.regions)) {
    for (const [b, ms] of Object.entries(row)) {
      if (!num(ms)) throw new Error(`${file}: regions.${a}.${b} must be a number of ms`);
    }
  }
  return t as RttTable;
}

/** The emulated RTT between two placements. */
export function edgeRtt(table: RttTable, a: Placement, b: Placement): EdgeRtt {
  if (a.region === "local" || b.region === "local") return { kind: "same-host", rttMs: 0, jitterMs: 0 };
  if (a.region === b.region) {
    return a.zone === b.zone
      ? { kind: "same-zone", ...table.sameZone }
      : { kind: "cross-zone", ...table.crossZone };
  }
  const rtt = table.regions[a.region]?.[b.region] ?? table.regions[b.region]?.[a.region];
  if (rtt === undefined) throw new Error(`the RTT table has no entry for ${a.region} <-> ${b.region}`);
  return { kind: "cross-region", rttMs: rtt, jitterMs: table.crossRegionJitterMs };
}

/**
 * One-way delays in whole ms (toxiproxy's unit) that add up to the rounded RTT: half each way, the
 * odd millisecond on the way out. Sub-millisecond RTTs become 0: loopback and the proxy hop
 * already cost about that much.
 */
export function oneWayDelays(rttMs: number): { upstreamMs: number; downstreamMs: number } {
  const total = Math.round(rttMs);
  return { upstreamMs: Math.ceil(total / 2), downstreamMs: Math.floor(total / 2) };
}
