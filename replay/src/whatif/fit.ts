import type { RttTable } from "@flaplab/netem";
import { deriveActions } from "./call-graph.js";
import { cpuByComponent } from "./cpu.js";
import { isNetworked, type Layout, layoutOf, groupOfComponent, rttBetween } from "./layout.js";
import { MODEL_FORMAT, type MetricFit, type ModelAction, type ModelCall, type WhatifModel } from "./model.js";
import { callsOnPath, pathShape, sumMs } from "./paths.js";
import { median, PREDICTED_METRICS, type PredictedMetric, type Study, type StudyRun } from "./study.js";

// Fits the model on a study's runs (all of them, or all but one deployment's).

/** A browser RTT below this tells nothing about the browser's round trips (machine noise is larger). */
const BROWSER_RTT_MIN_MS = 5;

export function fitModel(study: Study, table: RttTable, deployments: readonly string[] = study.deployments): WhatifModel {
  const runs = study.runs.filter((r) => deployments.includes(r.deployment));
  if (runs.length === 0) throw new Error(`no runs of ${deployments.join(", ")} to fit on`);
  const actions = deriveActions(runs).map((a) => ({ ...a, calls: a.calls.map((c) => callFigures(c, runs, table)) }));
  fillMissingHops(actions);
  const withPaths: ModelAction[] = actions.map((a) => ({
    ...a,
    calls: a.calls.map((c) => ({ ...c, onPath: PREDICTED_METRICS.filter((m) => callsOnPath(m, actions).some((p) => p.key === c.key)) })),
  }));
  const seeds = [...new Set(runs.map((r) => r.seed))];
  const metrics: Record<string, Record<PredictedMetric, MetricFit>> = {};
  const gameSeconds: Record<string, number> = {};
  for (const seed of seeds) {
    const seedRuns = runs.filter((r) => r.seed === seed);
    gameSeconds[seed] = seedRuns.reduce((s, r) => s + r.ticks / 30, 0) / seedRuns.length;
    // The start does not depend on the seed (the world is generated the same way): fitted on every seed's runs, it has more games to go on.
    metrics[seed] = Object.fromEntries(PREDICTED_METRICS.map((m) => [m, fitMetric(m, m === "start_game" ? runs : seedRuns, withPaths, table)])) as Record<PredictedMetric, MetricFit>;
  }
  return { format: MODEL_FORMAT, study: study.dir, fittedOn: [...deployments], seeds, gameSeconds, actions: withPaths, metrics, cpu: cpuByComponent(runs) };
}

type Figures = Omit<ModelCall, "onPath">;

/** A call's own time, its direct time and its networked hop (caller − callee − RTT, per deployment, then the median). */
function callFigures(call: ModelAction["calls"][number] | Omit<ModelCall, "ownMs" | "directMs" | "hopMs" | "hopFrom" | "onPath">, runs: readonly StudyRun[], table: RttTable): Figures {
  const own: number[] = [];
  const direct: number[] = [];
  const hops: number[] = [];
  const from: string[] = [];
  for (const deployment of new Set(runs.map((r) => r.deployment))) {
    const dRuns = runs.filter((r) => r.deployment === deployment);
    const layout = layoutOf(dRuns[0]!.topology);
    const recs = dRuns.flatMap((r) => r.calls.filter((c) => `${c.dst}.${c.dstVerb}<-${c.src}.${c.srcVerb}` === call.key));
    const caller = recs.filter((c) => c.side === "client").map((c) => c.ms);
    const callee = recs.filter((c) => c.side === "server").map((c) => c.ms);
    if (caller.length === 0) continue;
    if (!isNetworked(layout, call.caller, call.callee)) {
      direct.push(...caller);
      continue;
    }
    if (callee.length === 0) continue;
    own.push(...callee);
    const rtt = rttBetween(table, groupOfComponent(layout, call.caller), groupOfComponent(layout, call.callee));
    hops.push(median(caller) - median(callee) - rtt);
    from.push(deployment);
  }
  return {
    ...call,
    ownMs: own.length > 0 ? median(own) : null,
    directMs: direct.length > 0 ? median(direct) : null,
    hopMs: hops.length > 0 ? Math.max(0, median(hops)) : Number.NaN,
    hopFrom: from,
  };
}

/** A call never seen networked gets the median hop of the calls that were. */
function fillMissingHops(actions: { calls: Figures[] }[]): void {
  const known = actions.flatMap((a) => a.calls.filter((c) => !Number.isNaN(c.hopMs)).map((c) => c.hopMs));
  const fallback = known.length > 0 ? median(known) : 0;
  for (const a of actions) {
    a.calls = a.calls.map((c) => (Number.isNaN(c.hopMs) ? { ...c, hopMs: fallback, hopFrom: ["other calls"] } : c));
  }
}

interface Point {
  readonly deployment: string;
  /** Measured median minus the fixed RTTs. */
  readonly y: number;
  readonly hop: number;
  readonly browserRtt: number;
}

/**
 * A metric's base, hop share and browser round trips for one seed: measured = base + share × hops
 * + RTTs + round trips × browser RTT. Base and share by least squares over the deployments whose
 * browser RTT is small; the round trips from the others (one when there are none).
 */
function fitMetric(metric: PredictedMetric, runs: readonly StudyRun[], actions: readonly ModelAction[], table: RttTable): MetricFit {
  const points: Point[] = [];
  for (const deployment of new Set(runs.map((r) => r.deployment))) {
    const dRuns = runs.filter((r) => r.deployment === deployment);
    const samples = dRuns.flatMap((r) => r.samples[metric]);
    if (samples.length === 0) continue;
    const topology = dRuns[0]!.topology;
    const layout: Layout = layoutOf(topology);
    const measuredHop = (key: string) => measuredHopOf(key, dRuns, layout, table);
    const shape = pathShape(metric, layout, topology.browser, actions, (c) => measuredHop(c.key), table);
    points.push({ deployment, y: median(samples) - sumMs(shape.rtt), hop: sumMs(shape.hops), browserRtt: shape.browserCallRttMs });
  }
  const near = points.filter((p) => p.browserRtt < BROWSER_RTT_MIN_MS);
  const far = points.filter((p) => p.browserRtt >= BROWSER_RTT_MIN_MS);
  const nearFit = near.length > 0 ? near : points;
  const { base, share } = lineFit(nearFit.map((p) => p.hop), nearFit.map((p) => p.y - p.browserRtt));
  const trips = far.map((p) => (p.y - base - share * p.hop) / p.browserRtt);
  return {
    baseMs: base,
    hopShare: share,
    browserRoundTrips: trips.length > 0 ? Math.max(0, median(trips)) : 1,
    browserRoundTripsFrom: trips.length > 0 ? "fitted" : "prior",
    from: points.map((p) => p.deployment),
  };
}

/** The deployment's own hop for a call: its caller's median minus its callee's minus the RTT (0 when direct). */
function measuredHopOf(key: string, runs: readonly StudyRun[], layout: Layout, table: RttTable): number {
  const recs = runs.flatMap((r) => r.calls.filter((c) => `${c.dst}.${c.dstVerb}<-${c.src}.${c.srcVerb}` === key));
  const caller = recs.filter((c) => c.side === "client").map((c) => c.ms);
  const callee = recs.filter((c) => c.side === "server").map((c) => c.ms);
  if (caller.length === 0 || callee.length === 0) return 0;
  const first = recs[0]!;
  const rtt = rttBetween(table, groupOfComponent(layout, first.src), groupOfComponent(layout, first.dst));
  return Math.max(0, median(caller) - median(callee) - rtt);
}

/**
 * y = base + share × x by least squares, share ≥ 0. The share can be told from the base only with
 * a point whose path is direct (x ≈ 0) and one with hops (x ≥ 1 ms); otherwise share 1 (the whole
 * hop waited for) and the base the mean remainder.
 */
export function lineFit(x: readonly number[], y: readonly number[]): { base: number; share: number } {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (x[i]! - mx) ** 2;
    sxy += (x[i]! - mx) * (y[i]! - my);
  }
  if (n < 2 || Math.min(...x) > 0.5 || Math.max(...x) < 1) return { base: my - mx, share: 1 };
  const share = Math.max(0, sxy / sxx);
  return { base: my - share * mx, share };
}
