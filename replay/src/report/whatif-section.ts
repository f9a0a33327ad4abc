// The report's What-if section: a what-if validation's predictions (whatif.json, `pnpm whatif
// --validate`) beside what this study measured. Per placement and metric, the penalty against the
// monolith, predicted and measured; per placement, seed and metric, the medians and the error.
import type { Group, Report } from "./aggregate.js";
import { BASELINE } from "./paired.js";
import { formatMs, NONE, type Table } from "./tables.js";
import type { WhatifPlacement, WhatifPredictionsFile } from "../whatif/predictions-file.js";
import { median, PREDICTED_METRICS, type PredictedMetric } from "../whatif/study.js";
import { GOAL_MS, GOAL_SHARE, withinGoal } from "../whatif/validate.js";

/** A whatif.json as the report read it. */
export type WhatifInput = NonNullable<Report["whatif"]>;

export const METRIC_LABELS: Readonly<Record<PredictedMetric, string>> = {
  input_to_audio: "input → audio",
  input_to_effect: "input → effect",
  start_game: "start game",
};

/** A cell for a deployment the study did not run. */
export const NOT_RUN = "not run";
export const BASELINE_CELL = "(baseline)";

export interface WhatifPenaltyRow {
  readonly deployment: string;
  readonly metric: PredictedMetric;
  /** The seeds compared: where both deployments were measured, else every seed both placements have predictions for. */
  readonly seeds: readonly string[];
  /** Mean over `seeds` of (predicted median − the monolith's predicted median); null without seeds. */
  readonly predictedMs: number | null;
  /** Whether the study ran this deployment. */
  readonly run: boolean;
  /** The seeds of `seeds` where both this deployment and the monolith were measured. */
  readonly measuredSeeds: readonly string[];
  /** Mean over `measuredSeeds` of (measured median − the monolith's measured median); null without them. */
  readonly measuredMs: number | null;
}

export interface WhatifMedianRow {
  readonly deployment: string;
  readonly seed: string;
  readonly metric: PredictedMetric;
  readonly predictedMs: number;
  /** Whether the study ran this deployment. */
  readonly run: boolean;
  /** The median of every sample of the seed's pooled runs; null when not run or no samples. */
  readonly measuredMs: number | null;
  readonly errorMs: number | null;
  /** error ÷ measured. */
  readonly errorShare: number | null;
  /** |error| ≤ max(GOAL_SHARE × measured, GOAL_MS); null when nothing was measured. */
  readonly withinGoal: boolean | null;
}

export interface WhatifSection {
  readonly path: string;
  readonly model: WhatifPredictionsFile["model"];
  readonly placements: readonly (WhatifPlacement & { readonly run: boolean })[];
  readonly penalties: readonly WhatifPenaltyRow[];
  readonly medians: readonly WhatifMedianRow[];
}

/**
 * The median of a deployment's samples of one seed and metric, pooled over its pooled runs (as
 * `pnpm whatif` measures it); null when it has none.
 */
export function measuredMedian(groups: readonly Group[], deployment: string, seed: string, metric: PredictedMetric): number | null {
  const samples = groups
    .filter((g) => g.deployment === deployment && g.seed === seed)
    .flatMap((g) => g.pooled.flatMap((r) => r.values?.[metric] ?? []));
  return samples.length === 0 ? null : median(samples);
}

const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/** The section's rows; null when the report has no whatif.json. */
export function whatifSection(report: Report): WhatifSection | null {
  const input = report.whatif;
  if (!input) return null;
  const { groups } = report;
  const ran = new Set(groups.map((g) => g.deployment));
  const base = input.file.placements.find((p) => p.deployment === BASELINE);
  const penalties: WhatifPenaltyRow[] = [];
  const medians: WhatifMedianRow[] = [];
  for (const p of input.file.placements) {
    const run = ran.has(p.deployment);
    const seeds = Object.keys(p.predicted);
    for (const metric of PREDICTED_METRICS) {
      const shared = base ? seeds.filter((s) => base.predicted[s] !== undefined) : [];
      const measured = shared.flatMap((s) => {
        const own = measuredMedian(groups, p.deployment, s, metric);
        const baseMs = measuredMedian(groups, BASELINE, s, metric);
        return own === null || baseMs === null ? [] : [{ seed: s, diff: own - baseMs }];
      });
      // Predicted over the seeds it was measured on, where it was: both sides then speak of the same games.
      const compared = measured.length > 0 ? measured.map((m) => m.seed) : shared;
      penalties.push({
        deployment: p.deployment,
        metric,
        seeds: compared,
        predictedMs: mean(compared.map((s) => p.predicted[s]![metric] - base!.predicted[s]![metric])),
        run,
        measuredSeeds: measured.map((m) => m.seed),
        measuredMs: mean(measured.map((m) => m.diff)),
      });
    }
    for (const seed of seeds) {
      for (const metric of PREDICTED_METRICS) {
        const predictedMs = p.predicted[seed]![metric];
        const measuredMs = run ? measuredMedian(groups, p.deployment, seed, metric) : null;
        const errorMs = measuredMs === null ? null : predictedMs - measuredMs;
        medians.push({
          deployment: p.deployment,
          seed,
          metric,
          predictedMs,
          run,
          measuredMs,
          errorMs,
          errorShare: errorMs === null || measuredMs === null || measuredMs === 0 ? null : errorMs / measuredMs,
          withinGoal: errorMs === null || measuredMs === null ? null : withinGoal(errorMs, measuredMs),
        });
      }
    }
  }
  return {
    path: input.path,
    model: input.file.model,
    placements: input.file.placements.map((p) => ({ ...p, run: ran.has(p.deployment) })),
    penalties,
    medians,
  };
}

const list = (names: readonly string[]): string => (names.length === 0 ? "no deployment" : names.join(", "));

/** The sentence above the tables: what the model was fitted on, and the placements no repository topology has. */
export function whatifSentence(section: WhatifSection): string {
  const outside = section.placements.filter((p) => !p.inRepository).map((p) => p.deployment);
  const where =
    outside.length === 0
      ? "every placement is in a topology of the repository"
      : `${list(outside)} ${outside.length === 1 ? "is" : "are"} in no topology of the repository`;
  return `The model was fitted on ${list(section.model.fittedOn)} of the study ${section.model.study}; ${where}.`;
}

/** How many medians of deployments run here are within the goal, of how many were measured. */
export function goalCount(section: WhatifSection): { within: number; measured: number } {
  const measured = section.medians.filter((m) => m.withinGoal !== null);
  return { within: measured.filter((m) => m.withinGoal === true).length, measured: measured.length };
}

export const GOAL_TEXT = `|error| ≤ max(${Math.round(GOAL_SHARE * 100)} % of measured, ${GOAL_MS} ms)`;

const signedMs = (v: number): string => (v > 0 ? `+${formatMs(v)}` : formatMs(v));
const signedPct = (v: number): string => `${v > 0 ? "+" : ""}${(v * 100).toFixed(1)} %`;
const yesNo = (v: boolean): string => (v ? "yes" : "no");

export const WHATIF_PLACEMENT_HEADERS = ["placement", "origin", "in a repository topology", "run in this study", "where each component runs"] as const;

export function whatifPlacementTable(section: WhatifSection): Table {
  return {
    kind: "whatif",
    caption: `What-if placements (${section.path})`,
    textColumns: WHATIF_PLACEMENT_HEADERS.length,
    headers: WHATIF_PLACEMENT_HEADERS,
    rows: section.placements.map((p) => [p.deployment, p.origin, yesNo(p.inRepository), yesNo(p.run), p.description]),
  };
}

export const WHATIF_PENALTY_HEADERS = ["placement", "metric", "seeds", "predicted penalty", "measured penalty"] as const;

function penaltyCells(r: WhatifPenaltyRow): [string, string] {
  if (r.deployment === BASELINE) return [BASELINE_CELL, BASELINE_CELL];
  const predicted = r.predictedMs === null ? NONE : signedMs(r.predictedMs);
  const measured = !r.run ? NOT_RUN : r.measuredMs === null ? NONE : signedMs(r.measuredMs);
  return [predicted, measured];
}

export function whatifPenaltyTable(section: WhatifSection): Table {
  return {
    kind: "whatif-penalties",
    caption: `What-if: penalty against the monolith, ms: the placement's median − the ${BASELINE}'s, mean over the seeds both deployments were run on (where the placement was not run: every seed both have predictions for)`,
    textColumns: 3,
    headers: WHATIF_PENALTY_HEADERS,
    rows: section.penalties.map((r) => [r.deployment, METRIC_LABELS[r.metric], r.seeds.length === 0 ? NONE : r.seeds.join(", "), ...penaltyCells(r)]),
  };
}

export const WHATIF_MEDIAN_HEADERS = ["placement", "seed", "metric", "predicted", "measured", "error (ms)", "error (%)", "within goal"] as const;

export function whatifMedianTable(section: WhatifSection): Table {
  return {
    kind: "whatif-medians",
    caption: `What-if: predicted against measured median, ms (measured: every sample of the seed's runs pooled); error = predicted − measured; the goal: ${GOAL_TEXT}`,
    textColumns: 3,
    headers: WHATIF_MEDIAN_HEADERS,
    rows: section.medians.map((m) => [
      m.deployment,
      m.seed,
      METRIC_LABELS[m.metric],
      formatMs(m.predictedMs),
      m.run ? formatMs(m.measuredMs) : NOT_RUN,
      m.errorMs === null ? NONE : signedMs(m.errorMs),
      m.errorShare === null ? NONE : signedPct(m.errorShare),
      m.withinGoal === null ? NONE : yesNo(m.withinGoal),
    ]),
  };
}

/** What metrics.json carries of the section. */
export function whatifJson(section: WhatifSection | null): unknown {
  if (section === null) return null;
  return {
    file: section.path,
    model: section.model,
    goal: { share: GOAL_SHARE, ms: GOAL_MS },
    placements: section.placements,
    penalties: section.penalties,
    medians: section.medians,
  };
}
