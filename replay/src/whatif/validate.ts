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
        if (!model.seeds.includes(seed)) {
          rows.push({ deployment, seed, metric, predictedMs: null, measuredMs, errorMs: null, errorShare: null, withinGoal: false, fittedOn });
          continue;
        }
        const predictedMs = predictMetric(model, seed, metric, layoutOf(topology), topology.browser, table).ms;
        const errorMs = predictedMs - measuredMs;
        rows.push({
          deployment,
          seed,
          metric,
          predictedMs,
          measuredMs,
          errorMs,
          errorShare: errorMs / measuredMs,
          withinGoal: Math.abs(errorMs) <= Math.max(GOAL_SHARE * measuredMs, GOAL_MS),
          fittedOn,
        });
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
