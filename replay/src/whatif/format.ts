import { renderTable } from "@flaplab/report-kit";
import type { CapacityPlan } from "./capacity.js";
import { describeLayout } from "./placements.js";
import type { MetricPrediction, PlacementPrediction } from "./predict.js";
import { METRIC_PATHS } from "./paths.js";
import type { ValidationRow, validationSummary } from "./validate.js";

// The command's printed tables.

const ms = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function validationTable(rows: readonly ValidationRow[]): string {
  return renderTable({
    headers: ["deployment", "seed", "metric", "predicted ms", "measured ms", "error ms", "error", "goal", "fitted on"],
    rows: rows.map((r) => [
      r.deployment,
      r.seed,
      METRIC_PATHS[r.metric].label,
      r.predictedMs === null ? "–" : ms(r.predictedMs),
      ms(r.measuredMs),
      r.errorMs === null ? "–" : `${r.errorMs >= 0 ? "+" : ""}${ms(r.errorMs)}`,
      r.errorShare === null ? "–" : pct(r.errorShare),
      r.predictedMs === null ? "no seed" : r.withinGoal ? "ok" : "MISS",
      r.fittedOn.join(", "),
    ]),
  });
}

export function summaryTable(summary: ReturnType<typeof validationSummary>): string {
  return renderTable({
    headers: ["metric", "median |error| ms", "median |error|", "within goal"],
    rows: summary.map((s) => [METRIC_PATHS[s.metric].label, ms(s.medianAbsMs), pct(s.medianAbsShare), `${s.within}/${s.rows}`]),
  });
}

export function rankingTable(ranked: readonly PlacementPrediction[]): string {
  const regions = ranked[0]?.perRegion.map((r) => r.region) ?? [];
  return renderTable({
    headers: ["#", "placement", "input → audio", "input → effect", "start game", ...regions.map((r) => `audio / start, ${r}`)],
    rows: ranked.map((p, i) => [
      String(i + 1),
      describeLayout(p.layout),
      ms(p.weighted.input_to_audio),
      ms(p.weighted.input_to_effect),
      ms(p.weighted.start_game),
      ...p.perRegion.map((r) => `${ms(r.metrics.input_to_audio.ms)} / ${ms(r.metrics.start_game.ms)}`),
    ]),
  });
}

export function criticalPath(title: string, p: MetricPrediction): string {
  const rows = p.terms.filter((t) => Math.abs(t.ms) >= 0.005).map((t) => [t.label, ms(t.ms), pct(t.ms / p.ms)]);
  return `${title}: ${ms(p.ms)} ms\n${renderTable({ headers: ["part", "ms", "share"], rows })}`;
}

export function capacityTable(plan: CapacityPlan): string {
  const rows = plan.rows.map((r) => [r.group, r.cores.toFixed(2), r.vcpu.toFixed(2), `${r.size.cpu}, ${r.size.memory}`, String(r.tasks), r.note]);
  const cost = renderTable({
    headers: ["item", "quantity", "USD per hour"],
    rows: [...plan.cost.lines.map((l) => [l.item, `${Number(l.quantity.toFixed(2))} ${l.unit}`, l.usdPerHour.toFixed(3)]), ["total", "", plan.cost.usdPerHour.toFixed(2)]],
  });
  return [
    `${plan.playersOnline} players online, ${plan.gameSeconds.toFixed(1)} s a game (${plan.gamesPerSecond.toFixed(1)} new games a second), target CPU ${pct(plan.targetCpu)}:`,
    renderTable({ headers: ["group", "cores busy", "vCPU", "task size", "tasks", "note"], rows }),
    "",
    cost,
  ].join("\n");
}
