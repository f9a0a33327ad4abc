import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { renderTable } from "@flaplab/report-kit";
import { UsageError } from "./load.js";
import { metricInfo, type MetricId, METRIC_IDS } from "./metrics.js";
import type { PairedPenalty } from "./paired.js";
import { REPORT_FORMAT } from "./render.js";
import { formatMs } from "./tables.js";

/** One paired penalty as metrics.json holds it. */
type PenaltyJson = Pick<PairedPenalty, "deployment" | "seed" | "metric" | "pairs" | "meanMs" | "lowMs" | "highMs">;

/** The same penalty in two studies, and whether their intervals overlap (null: either has none). */
export interface Agreement {
  readonly deployment: string;
  readonly seed: string;
  readonly metric: MetricId;
  readonly a: PenaltyJson;
  readonly b: PenaltyJson;
  readonly overlap: boolean | null;
}

/** metrics.json of a study folder (`<dir>/report/metrics.json`), a report folder, or the file itself. */
export function metricsFileOf(path: string): string {
  const candidates = [path, join(path, "metrics.json"), join(path, "report", "metrics.json")];
  const found = candidates.find((p) => existsSync(p) && statSync(p).isFile());
  if (!found) throw new UsageError(`no metrics.json at ${path} (give a study folder, its report folder or the file)`);
  return found;
}

/** Every paired penalty a report's metrics.json holds; a clear error for anything else. */
export async function loadPenalties(file: string): Promise<PenaltyJson[]> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    throw new UsageError(`${file}: ${(err as Error).message}`);
  }
  const doc = json as { format?: unknown; groups?: unknown };
  if (doc.format !== REPORT_FORMAT || !Array.isArray(doc.groups)) throw new UsageError(`${file}: not a ${REPORT_FORMAT} metrics.json`);
  const out: PenaltyJson[] = [];
  for (const g of doc.groups as { penalties?: unknown }[]) {
    if (!Array.isArray(g.penalties)) continue;
    for (const p of g.penalties as PenaltyJson[]) {
      if (typeof p.deployment === "string" && typeof p.seed === "string" && METRIC_IDS.includes(p.metric)) out.push(p);
    }
  }
  return out;
}

/** Joins two studies' penalties on deployment, seed and metric. */
export function agreements(a: readonly PenaltyJson[], b: readonly PenaltyJson[]): Agreement[] {
  const out: Agreement[] = [];
  for (const pa of a) {
    const pb = b.find((p) => p.deployment === pa.deployment && p.seed === pa.seed && p.metric === pa.metric);
    if (!pb) continue;
    const bounded = pa.lowMs !== null && pa.highMs !== null && pb.lowMs !== null && pb.highMs !== null;
    out.push({ deployment: pa.deployment, seed: pa.seed, metric: pa.metric, a: pa, b: pb, overlap: bounded ? pa.lowMs! <= pb.highMs! && pb.lowMs! <= pa.highMs! : null });
  }
  return out;
}

const interval = (p: PenaltyJson): string => (p.lowMs === null || p.highMs === null ? "–" : `${formatMs(p.lowMs)} … ${formatMs(p.highMs)}`);

/** `pnpm report compare <a> <b>`: the two studies' penalties side by side, and whether they agree. */
export async function compareStudies(pathA: string, pathB: string, cwd: string): Promise<{ text: string; rows: Agreement[] }> {
  const [fa, fb] = [metricsFileOf(resolve(cwd, pathA)), metricsFileOf(resolve(cwd, pathB))];
  const rows = agreements(await loadPenalties(fa), await loadPenalties(fb));
  if (rows.length === 0) throw new UsageError(`${fa} and ${fb} have no paired penalty in common (deployment, seed and metric)`);
  const table = renderTable({
    headers: ["deployment", "seed", "metric", "A penalty (ms)", "A 95 % interval", "B penalty (ms)", "B 95 % interval", "overlap"],
    align: ["l", "l", "l", "r", "r", "r", "r", "r"],
    rows: rows.map((r) => [
      r.deployment,
      r.seed,
      metricInfo(r.metric).label,
      formatMs(r.a.meanMs),
      interval(r.a),
      formatMs(r.b.meanMs),
      interval(r.b),
      r.overlap === null ? "–" : r.overlap ? "yes" : "NO",
    ]),
  });
  const judged = rows.filter((r) => r.overlap !== null);
  const agree = judged.filter((r) => r.overlap).length;
  const text = [`A: ${fa}`, `B: ${fb}`, "", table, "", `${agree} of ${judged.length} intervals overlap`].join("\n");
  return { text, rows };
}
