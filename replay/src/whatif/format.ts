import { renderTable } from "@flaplab/report-kit";
import type { CapacityPlan } from "./capacity.js";
import type { CapacityCheckRow, LoadCpu } from "./capacity-check.js";
import type { CheckedPlacement } from "./check.js";
import type { WhatifModel } from "./model.js";
import type { PredictedMetric } from "./study.js";
import { describeLayout } from "./placements.js";
import type { MetricPrediction, PlacementPrediction } from "./predict.js";
import { METRIC_PATHS } from "./paths.js";
import type { ValidationRow, validationSummary } from "./validate.js";

// The command's printed tables.

const ms = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

export function validationTable(
  rows: readonly ValidationRow[],
  last: { header: string; value: (r: ValidationRow) => string } = { header: "fitted on", value: (r) => r.fittedOn.join(", ") },
): string {
  return renderTable({
    headers: ["deployment", "seed", "metric", "predicted ms", "measured ms", "error ms", "error", "goal", last.header],
    rows: rows.map((r) => [
      r.deployment,
      r.seed,
      METRIC_PATHS[r.metric].label,
      r.predictedMs === null ? "–" : ms(r.predictedMs),
      ms(r.measuredMs),
      r.errorMs === null ? "–" : `${r.errorMs >= 0 ? "+" : ""}${ms(r.errorMs)}`,
      r.errorShare === null ? "–" : pct(r.errorShare),
      r.predictedMs === null ? "no seed" : r.withinGoal ? "ok" : "MISS",
      last.value(r),
    ]),
  });
}

/** The placements a check runs, with what is predicted for them (the seeds' mean). */
export function placementTable(placements: readonly CheckedPlacement[]): string {
  const mean = (p: CheckedPlacement, m: PredictedMetric) => {
    const v = Object.values(p.predicted).map((x) => x[m]);
    return v.reduce((a, b) => a + b, 0) / v.length;
  };
  return renderTable({
    headers: ["deployment", "origin", "in a repository topology", "placement (browser)", "input → audio", "input → effect", "start game"],
    rows: placements.map((p) => [
      p.deployment,
      p.origin,
      p.inRepository ? "yes" : "no",
      `${describeLayout(p.layout)} (${p.browser.region}${p.browser.zone})`,
      ms(mean(p, "input_to_audio")),
      ms(mean(p, "input_to_effect")),
      ms(mean(p, "start_game")),
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

/** The model's CPU figures per component. */
export function cpuTable(model: WhatifModel): string {
  const f = (x: number | null) => (x === null ? "–" : (x / 1000).toFixed(2));
  return renderTable({
    headers: ["component", "runs", "idle ms/s", "start ms", "per game ms", "per game-second ms"],
    rows: model.cpu.map((c) => [c.component, String(c.runs), f(c.idleUsPerSecond), f(c.startUs), f(c.perGameUs), f(c.perGameSecondUs)]),
  });
}

/** CPU under load per component, ms a second and ms. */
export function loadCpuTable(figures: readonly LoadCpu[]): string {
  const f = (us: number) => (us / 1000).toFixed(2);
  return renderTable({
    headers: ["component", "idle ms/s", "active ms/s", "per game-second ms", "start ms", "start from", "levels"],
    rows: figures.map((c) => [c.component, f(c.idleUsPerSecond), f(c.activeUsPerSecond), f(c.perGameSecondUs), f(c.startUs), c.startFrom === "load" ? "these levels" : "the study", c.levels.join(", ")]),
  });
}

export function capacityCheckTable(rows: readonly CapacityCheckRow[], goal: number): string {
  const verdict = (e: number | null) => (e === null ? "–" : Math.abs(e) <= goal ? "ok" : "MISS");
  const earlier = rows.some((r) => r.fromLoadCpuS !== null);
  return renderTable({
    headers: ["players", "process", "window s", "games", "game-seconds", "measured CPU s", "from single games", "error", "goal", "from the other levels", "error", "goal", ...(earlier ? ["from --cpu", "error", "goal"] : [])],
    rows: rows.map((r) => [
      String(r.level),
      r.group,
      r.windowS.toFixed(1),
      String(r.games),
      r.gameSeconds.toFixed(0),
      r.measuredCpuS.toFixed(2),
      r.predictedCpuS.toFixed(2),
      pct(r.error),
      verdict(r.error),
      r.fromLevelsCpuS === null ? "–" : r.fromLevelsCpuS.toFixed(2),
      r.fromLevelsError === null ? "–" : pct(r.fromLevelsError),
      verdict(r.fromLevelsError),
      ...(earlier ? [r.fromLoadCpuS === null ? "–" : r.fromLoadCpuS.toFixed(2), r.fromLoadError === null ? "–" : pct(r.fromLoadError), verdict(r.fromLoadError)] : []),
    ]),
  });
}
