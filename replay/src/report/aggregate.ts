import { LatencyHistogram, type Stats } from "@flaplab/report-kit/latency";
import type { LoadLevel } from "./levels.js";
import type { Problem, RpcSide, RunData, RunSource } from "./load.js";
import { METRIC_IDS, type MetricId } from "./metrics.js";
import type { WhatifPredictionsFile } from "../whatif/predictions-file.js";

/** Latency of one RPC edge (caller → callee, method), pooled over a group's runs. */
export interface RpcRow {
  readonly src: string;
  readonly dst: string;
  readonly verb: string;
  /** "caller": the whole call, timed by the caller; "callee": the callee's share of networked calls. */
  readonly side: RpcSide;
  /** "src → dst verb", with " (callee)" for the callee's share. */
  readonly label: string;
  readonly stats: Stats;
  readonly histogram: LatencyHistogram;
}

/** All runs of one deployment × seed, with their pooled metrics. */
export interface Group {
  readonly deployment: string;
  readonly seed: string;
  readonly sources: readonly RunSource[];
  /** Every run, in folder-name order, whatever its status. */
  readonly runs: readonly RunData[];
  /** Runs whose samples are pooled: status ok with a readable latency log. */
  readonly pooled: readonly RunData[];
  /** Pooled stats per metric; null when the data source cannot measure the metric ("n/a"). */
  readonly metrics: Readonly<Record<MetricId, Stats | null>>;
  readonly histograms: Readonly<Record<MetricId, LatencyHistogram | null>>;
  readonly rpc: readonly RpcRow[];
}

export interface Report {
  readonly generatedAt: string;
  /** The folders the report was made from. */
  readonly inputs: readonly string[];
  readonly groups: readonly Group[];
  readonly problems: readonly Problem[];
  /** The load levels of a study with `--load`: the study's record and the bots' summary per deployment × level. */
  readonly levels?: readonly LoadLevel[];
  /** The study's what-if predictions (whatif.json) and the file they were read from. */
  readonly whatif?: { readonly path: string; readonly file: WhatifPredictionsFile };
}

/** Metrics a data source cannot provide. FlappyGo logs no input seqs, so no input-to-effect. */
const UNAVAILABLE: Readonly<Record<RunSource, readonly MetricId[]>> = {
  flaplab: [],
  flappygo: ["input_to_effect"],
};

export function rpcLabel(src: string, dst: string, verb: string, side: RpcSide = "caller"): string {
  return `${src} → ${dst} ${verb}${side === "callee" ? " (callee)" : ""}`;
}

/**
 * The study's deployments, nearest first: listed in this order, before any other (by name). A
 * deployment's runs over another stream link ("monolith+websocket") follow its own.
 */
export const DEPLOYMENT_ORDER: readonly string[] = ["monolith", "microservices", "multiaz", "multiregion"];

/**
 * A deployment's name without its load level, and the level: runs of `pnpm study --load` at L
 * bot players are filed as `<deployment>@<L>` ("microservices+websocket@100"); other names are level 0.
 */
export function splitLevel(name: string): { readonly name: string; readonly level: number } {
  const m = /^(.+)@(\d+)$/.exec(name);
  return m ? { name: m[1]!, level: Number(m[2]) } : { name, level: 0 };
}

function deploymentRank(full: string): number {
  const { name } = splitLevel(full);
  const plus = name.indexOf("+");
  const i = DEPLOYMENT_ORDER.indexOf(plus < 0 ? name : name.slice(0, plus));
  return (i < 0 ? DEPLOYMENT_ORDER.length : i) * 2 + (plus < 0 ? 0 : 1);
}

/**
 * Groups runs by deployment × seed and pools them: per metric, one HdrHistogram per group that
 * holds every sample of every pooled run (per-run histograms added together).
 */
export function buildReport(runs: readonly RunData[], problems: readonly Problem[], inputs: readonly string[], now = new Date()): Report {
  const byKey = new Map<string, RunData[]>();
  for (const run of runs) {
    const key = `${run.deployment}\u0000${run.seed}`;
    const list = byKey.get(key) ?? [];
    list.push(run);
    byKey.set(key, list);
  }
  const groups = [...byKey.values()].map((list) => buildGroup(list));
  groups.sort(
    (a, b) =>
      a.seed.localeCompare(b.seed) ||
      deploymentRank(a.deployment) - deploymentRank(b.deployment) ||
      splitLevel(a.deployment).name.localeCompare(splitLevel(b.deployment).name) ||
      splitLevel(a.deployment).level - splitLevel(b.deployment).level,
  );
  return { generatedAt: now.toISOString(), inputs: [...inputs], groups, problems: [...problems] };
}

function buildGroup(list: RunData[]): Group {
  const runs = [...list].sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }) || a.dir.localeCompare(b.dir));
  const first = runs[0]!;
  const sources = [...new Set(runs.map((r) => r.source))];
  const pooled = runs.filter((r) => r.status === "ok" && r.values !== null);
  const metrics = {} as Record<MetricId, Stats | null>;
  const histograms = {} as Record<MetricId, LatencyHistogram | null>;
  for (const id of METRIC_IDS) {
    const available = sources.some((s) => !UNAVAILABLE[s].includes(id));
    if (!available) {
      metrics[id] = null;
      histograms[id] = null;
      continue;
    }
    const merged = new LatencyHistogram();
    for (const run of pooled) {
      const values = run.values![id];
      if (values) merged.add(LatencyHistogram.of(values));
    }
    metrics[id] = merged.stats();
    histograms[id] = merged;
  }

  const rpcHist = new Map<string, { src: string; dst: string; verb: string; side: RpcSide; h: LatencyHistogram }>();
  for (const run of pooled) {
    const perRun = new Map<string, LatencyHistogram>();
    for (const s of run.rpc) {
      const key = `${s.src}\u0000${s.dst}\u0000${s.verb}\u0000${s.side}`;
      if (!rpcHist.has(key)) rpcHist.set(key, { src: s.src, dst: s.dst, verb: s.verb, side: s.side, h: new LatencyHistogram() });
      const h = perRun.get(key) ?? new LatencyHistogram();
      h.record(s.ms);
      perRun.set(key, h);
    }
    for (const [key, h] of perRun) rpcHist.get(key)!.h.add(h);
  }
  const rpc = [...rpcHist.values()]
    .map(({ src, dst, verb, side, h }) => ({ src, dst, verb, side, label: rpcLabel(src, dst, verb, side), stats: h.stats(), histogram: h }))
    .sort((a, b) => a.src.localeCompare(b.src) || a.dst.localeCompare(b.dst) || a.verb.localeCompare(b.verb) || Number(a.side === "callee") - Number(b.side === "callee"));

  return { deployment: first.deployment, seed: first.seed, sources, runs, pooled, metrics, histograms, rpc };
}

/** "min–max" of the per-RPC medians of a group (ms), or null without RPCs. */
export function medianRpcRange(group: Group): { low: number; high: number } | null {
  const medians = group.rpc.filter((r) => r.side === "caller").map((r) => r.stats.median).filter((m): m is number => m !== null);
  if (medians.length === 0) return null;
  return { low: Math.min(...medians), high: Math.max(...medians) };
}
