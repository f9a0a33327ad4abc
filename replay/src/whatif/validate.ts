import type { RttTable } from "@flaplab/netem";
import { fitModel } from "./fit.js";
import { layoutOf } from "./layout.js";
import { predictMetric } from "./predict.js";
import { median, PREDICTED_METRICS, type PredictedMetric, type Study } from "./study.js";

// Predicts each deployment of a study from a model fitted without it (leave-one-out), and sets
// the prediction beside what the deployment measured.

export interface ValidationRow {
  readonly deployment: string;
  readonly seed: string;
  readonly metric: PredictedMetric;
  /** Null when the other deployments did not play this seed: nothing to predict it from. */
  readonly predictedMs: number | null;
  readonly measuredMs: number;
  readonly errorMs: number | null;
  /** error ÷ measured. */
  readonly errorShare: number | null;
  /** Within the goal: |error| ≤ max(10 % of measured, 3 ms). */
  readonly withinGoal: boolean;
  /** The deployments the model was fitted on. */
  readonly fittedOn: readonly string[];
}

export const GOAL_SHARE = 0.1;
export const GOAL_MS = 3;

/** Whether an error is within the what-if goal: |error| ≤ max(10 % of measured, 3 ms). */
export function withinGoal(errorMs: number, measuredMs: number): boolean {
  return Math.abs(errorMs) <= Math.max(GOAL_SHARE * measuredMs, GOAL_MS);
}

/** A row of predicted against measured; a null prediction (nothing to predict from) is no error and not within the goal. */
export function validationRow(
  of: Pick<ValidationRow, "deployment" | "seed" | "metric" | "fittedOn">,
  predictedMs: number | null,
  measuredMs: number,
): ValidationRow {
  const errorMs = predictedMs === null ? null : predictedMs - measuredMs;
  return {
    ...of,
    predictedMs,
    measuredMs,
    errorMs,
    errorShare: errorMs === null ? null : errorMs / measuredMs,
    withinGoal: errorMs !== null && withinGoal(errorMs, measuredMs),
  };
}

export function validate(study: Study, table: RttTable): ValidationRow[] {
  const rows: ValidationRow[] = [];
  for (const deployment of study.deployments) {
    const others = study.deployments.filter((d) => d !== deployment);
    const fittedOn = others.length > 0 ? others : [deployment];
    const model = fitModel(study, table, fittedOn);
    const runs = study.runs.filter((r) => r.deployment === deployment);
    const topology = runs[0]!.topology;
    for (const seed of study.seeds) {
      const seedRuns = runs.filter((r) => r.seed === seed);
      for (const metric of PREDICTED_METRICS) {
        const samples = seedRuns.flatMap((r) => r.samples[metric]);
        if (samples.length === 0) continue;
        const measuredMs = median(samples);
        const predictedMs = model.seeds.includes(seed) ? predictMetric(model, seed, metric, layoutOf(topology), topology.browser, table).ms : null;
        rows.push(validationRow({ deployment, seed, metric, fittedOn }, predictedMs, measuredMs));
      }
    }
  }
  return rows;
}

/** Per metric: the median absolute error over the predicted rows, ms and share, and how many of all rows meet the goal. */
export function validationSummary(rows: readonly ValidationRow[]): { metric: PredictedMetric; medianAbsMs: number; medianAbsShare: number; within: number; rows: number }[] {
  return PREDICTED_METRICS.map((metric) => {
    const all = rows.filter((r) => r.metric === metric);
    const of = all.filter((r) => r.errorMs !== null && r.errorShare !== null);
    return {
      metric,
      medianAbsMs: median(of.map((r) => Math.abs(r.errorMs!))),
      medianAbsShare: median(of.map((r) => Math.abs(r.errorShare!))),
      within: of.filter((r) => r.withinGoal).length,
      rows: all.length,
    };
  });
}
