import { Rand } from "@flaplab/go-rand";
import type { Group } from "./aggregate.js";
import type { RunData } from "./load.js";
import { COMPARISON_METRICS, type MetricId, PRESS_METRICS, type PressMetricId } from "./metrics.js";

/** Confidence of the intervals. */
export const CONFIDENCE = 0.95;
/** Bootstrap resamples per interval. */
export const RESAMPLES = 10_000;
/** The deployment every other one is compared with. */
export const BASELINE = "monolith";

/** One deployment's penalty against the baseline on one metric and seed, from runs paired by round. */
export interface PairedPenalty {
  readonly deployment: string;
  readonly seed: string;
  readonly metric: MetricId;
  /** Rounds where both deployments have a run with samples of the metric. */
  readonly pairs: number;
  /** The mean over pairs of (the deployment's run median − the baseline's run median), ms. */
  readonly meanMs: number | null;
  /** The 95 % percentile-bootstrap interval of that mean, ms; null with fewer than two pairs. */
  readonly lowMs: number | null;
  readonly highMs: number | null;
  /** Whether the interval includes zero (the penalty is not told apart from the noise). */
  readonly includesZero: boolean | null;
}

/** The median of a run's samples of `metric`, or null. */
export function runMedian(run: RunData, metric: MetricId): number | null {
  return median(run.values?.[metric] ?? []);
}

/** The round of a run: its number among its deployment × seed's runs (run-003 is round 3). */
export function roundOf(run: RunData): number | null {
  const m = /^run-(\d+)$/.exec(run.id);
  return m ? Number(m[1]) : null;
}

/**
 * The mean of `diffs` and its percentile-bootstrap interval: `resamples` resamples of the pairs
 * with replacement, from a fixed seed (the same data give the same interval).
 */
export function bootstrapMean(diffs: readonly number[], resamples = RESAMPLES, confidence = CONFIDENCE, seed = 1n): { mean: number; low: number; high: number } {
  if (diffs.length === 0) throw new RangeError("no pairs");
  const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
  const rand = new Rand(seed);
  const means = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) {
    let sum = 0;
    for (let j = 0; j < diffs.length; j++) sum += diffs[rand.int31n(diffs.length)]!;
    means[i] = sum / diffs.length;
  }
  means.sort();
  const tail = (1 - confidence) / 2;
  const at = (q: number): number => means[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
  return { mean, low: at(tail), high: at(1 - tail) };
}

/**
 * The deployment `name` is compared with: the baseline over the same stream link and at the same
 * load level ("monolith+websocket", "monolith@100").
 */
export function baselineOf(name: string, baseline = BASELINE): string {
  const suffix = name.search(/[+@]/);
  return suffix < 0 ? baseline : `${baseline}${name.slice(suffix)}`;
}

/** Every deployment's paired penalty against the baseline, per seed and metric. */
export function pairedPenalties(groups: readonly Group[], baseline = BASELINE): PairedPenalty[] {
  const out: PairedPenalty[] = [];
  for (const group of groups) {
    const base = groups.find((g) => g.seed === group.seed && g.deployment === baselineOf(group.deployment, baseline));
    if (base === undefined || base === group) continue;
    for (const metric of COMPARISON_METRICS) {
      const baseByRound = new Map<number, number>();
      for (const run of base.pooled) {
        const r = roundOf(run);
        const m = runMedian(run, metric);
        if (r !== null && m !== null) baseByRound.set(r, m);
      }
      const diffs: number[] = [];
      for (const run of group.pooled) {
        const r = roundOf(run);
        const m = runMedian(run, metric);
        const b = r === null ? undefined : baseByRound.get(r);
        if (m !== null && b !== undefined) diffs.push(m - b);
      }
      if (diffs.length < 2) {
        out.push({ deployment: group.deployment, seed: group.seed, metric, pairs: diffs.length, meanMs: diffs[0] ?? null, lowMs: null, highMs: null, includesZero: null });
        continue;
      }
      const { mean, low, high } = bootstrapMean(diffs);
      out.push({ deployment: group.deployment, seed: group.seed, metric, pairs: diffs.length, meanMs: mean, lowMs: low, highMs: high, includesZero: low <= 0 && high >= 0 });
    }
  }
  return out;
}

/** A duet's penalty, press by press: one deployment against the one it played beside. */
export interface DuetPenalty {
  readonly deployment: string;
  /** The deployment it played beside at the same time (the duet's reference). */
  readonly reference: string;
  readonly seed: string;
  readonly metric: PressMetricId;
  /** Duet runs where both sides have presses of the metric. */
  readonly pairs: number;
  /** Presses paired over those runs. */
  readonly presses: number;
  /** The mean over runs of the median of that run's press-by-press differences (deployment − reference), ms. */
  readonly meanMs: number | null;
  readonly lowMs: number | null;
  readonly highMs: number | null;
  readonly includesZero: boolean | null;
  /** The median over runs of how far apart the two games started, |ms|. */
  readonly startSkewMs: number | null;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Every duet's penalty press by press: for run N of a deployment that played beside its reference,
 * the differences of each press's metric between the two (same seq: the same press of the trace,
 * at the same moment of the machine), their median per run, and the mean of those over runs with a
 * percentile-bootstrap interval (the runs are the resampled unit: presses of one run are not
 * independent).
 */
export function duetPenalties(groups: readonly Group[]): DuetPenalty[] {
  const out: DuetPenalty[] = [];
  for (const group of groups) {
    const duetRuns = group.pooled.filter((r) => r.duet !== null && r.duet.reference !== group.deployment);
    const referenceName = duetRuns[0]?.duet?.reference;
    if (referenceName === undefined) continue;
    const reference = groups.find((g) => g.seed === group.seed && g.deployment === referenceName);
    if (reference === undefined) continue;
    const referenceByRound = new Map<number, RunData>();
    for (const run of reference.pooled) {
      const r = roundOf(run);
      if (r !== null && run.duet?.partner === group.deployment) referenceByRound.set(r, run);
    }
    const skews = duetRuns.map((r) => r.duet?.startSkewMs).filter((s): s is number => typeof s === "number").map(Math.abs);
    for (const metric of PRESS_METRICS) {
      const perRun: number[] = [];
      let presses = 0;
      for (const run of duetRuns) {
        const r = roundOf(run);
        const other = r === null ? undefined : referenceByRound.get(r);
        const mine = run.presses?.[metric];
        const theirs = other?.presses?.[metric];
        if (!mine || !theirs) continue;
        const diffs: number[] = [];
        for (const [seq, ms] of mine) {
          const base = theirs.get(seq);
          if (base !== undefined) diffs.push(ms - base);
        }
        const m = median(diffs);
        if (m === null) continue;
        perRun.push(m);
        presses += diffs.length;
      }
      const common = { deployment: group.deployment, reference: referenceName, seed: group.seed, metric, pairs: perRun.length, presses, startSkewMs: median(skews) };
      if (perRun.length < 2) {
        out.push({ ...common, meanMs: perRun[0] ?? null, lowMs: null, highMs: null, includesZero: null });
        continue;
      }
      const { mean, low, high } = bootstrapMean(perRun);
      out.push({ ...common, meanMs: mean, lowMs: low, highMs: high, includesZero: low <= 0 && high >= 0 });
    }
  }
  return out;
}
