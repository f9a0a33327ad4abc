import type { Group, Report } from "./aggregate.js";
import { csvCell } from "@flaplab/report-kit/csv";
import { markdownCell, renderTable } from "@flaplab/report-kit/markdown";
import { STAT_KEYS } from "@flaplab/report-kit/latency";
import { cpuRows } from "./cpu.js";
import { METRICS } from "./metrics.js";
import { duetPenalties, pairedPenalties } from "./paired.js";
import { loadBotTable, loadHumanTable, type LoadRow, loadRows, rowsByDeployment, saturationSentence } from "./load-section.js";
import { goalCount, GOAL_TEXT, whatifJson, whatifMedianTable, whatifPenaltyTable, whatifPlacementTable, type WhatifSection, whatifSection, whatifSentence } from "./whatif-section.js";
import { cdfPlot, interArrivalPlot, type LoadPoint, loadAudioPlot, loadPenaltyPlot, rpcPlot } from "./plots.js";
import {
  comparisonTable,
  cpuTable,
  failuresTable,
  faultsTable,
  groupTitle,
  latencyTable,
  penaltyTable,
  duetTable,
  problemsTable,
  rpcTable,
  runsTable,
  type Table,
} from "./tables.js";

export const REPORT_FORMAT = "flaplab-report/1";

const PERCENTILE_NOTE =
  "Percentiles come from one HdrHistogram per metric per deployment × seed (µs, 3 significant digits) " +
  "that holds every sample of every pooled run; min, mean and max are exact over the same samples. " +
  "Only runs with status ok are pooled.";

const FLAPPYGO_NOTE =
  "FlappyGo data: input-to-next-frame and input-to-audio use FlappyGo's definitions (first frame / first " +
  "sound received after each input send, by bisect_right); input-to-effect cannot be computed (no input seqs).";

// ---------- HTML ----------

function esc(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

function htmlTable(t: Table): string {
  if (t.rows.length === 0) return "";
  const cls = (i: number): string => (i < t.textColumns ? ' class="t"' : "");
  const head = t.headers.map((h, i) => `<th${cls(i)}>${esc(h)}</th>`).join("");
  const body = t.rows
    .map((r) => {
      const status = t.kind === "runs" || t.kind === "failures" ? r[1] : undefined;
      const rowClass = status === "failed" || status === "unreadable" ? ` class="${status}"` : "";
      const cells = r.map((c, i) => (i === 0 ? `<th scope="row"${cls(i)}>${esc(c)}</th>` : `<td${cls(i)}>${esc(c)}</td>`)).join("");
      return `<tr${rowClass}>${cells}</tr>`;
    })
    .join("\n");
  return `<div class="scroll"><table class="${t.kind}"><caption>${esc(t.caption)}</caption><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 1.5rem auto; max-width: 1200px; padding: 0 1rem; }
h1 { font-size: 1.6rem; }
section > h2 { font-size: 1.3rem; border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2.5rem; }
section > h3 { font-size: 1.05rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; }
th, td { border: 1px solid #ddd; padding: .2rem .55rem; text-align: right; white-space: nowrap; }
thead th { background: #f3f3f3; white-space: normal; } tbody th { font-weight: normal; }
th.t, td.t { text-align: left; }
table.failures td:last-child, table.problems td:last-child { white-space: normal; }
table.load-bots td:nth-last-child(-n+2) { white-space: normal; text-align: left; min-width: 12rem; }
table.whatif td:last-child { white-space: normal; min-width: 16rem; }
tr.failed > * { background: #fff4e5; } tr.unreadable > * { background: #fdecec; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; } .chart { margin: .5rem 0; }
.chart h2 { font-size: 1rem; margin: 0 0 .3rem; }
.meta, .note { color: #555; } code { background: #f5f5f5; padding: 0 .2rem; }
nav ul { columns: 2; }
`;

function chart(svg: string | null, title: string): string {
  return svg === null ? "" : `<div class="chart" role="img" aria-label="${esc(title)}">${svg}</div>`;
}

function groupAnchor(index: number): string {
  return `group-${index + 1}`;
}

function htmlGroup(group: Group, index: number): string {
  const parts = [`<section id="${groupAnchor(index)}"><h2>${esc(groupTitle(group))}</h2>`];
  const failed = group.runs.filter((r) => r.status === "failed").length;
  const unreadable = group.runs.filter((r) => r.status === "unreadable").length;
  parts.push(
    `<p class="meta">${group.runs.length} run(s): ${group.pooled.length} pooled, ${failed} failed, ${unreadable} unreadable. Source: ${esc(group.sources.join(", "))}.</p>`,
  );
  if (group.sources.includes("flappygo")) parts.push(`<p class="note">${esc(FLAPPYGO_NOTE)}</p>`);
  parts.push(htmlTable(latencyTable(group)));
  if (group.rpc.length > 0) parts.push(htmlTable(rpcTable(group)), chart(rpcPlot(group), `per-RPC latency, ${groupTitle(group)}`));
  else parts.push(`<p class="note">No RPC records.</p>`);
  const ia = interArrivalPlot(group);
  if (ia) parts.push(`<h3>Frame inter-arrival over time</h3>`, chart(ia, `frame inter-arrival over time, ${groupTitle(group)}`));
  parts.push(htmlTable(runsTable(group)));
  const faults = faultsTable(group);
  if (faults.rows.length > 0) parts.push(htmlTable(faults));
  const failures = failuresTable(group);
  if (failures.rows.length > 0) parts.push(htmlTable(failures));
  parts.push("</section>");
  return parts.join("\n");
}

/** CDF charts per seed: one chart per metric, one line per deployment. */
function htmlCdfs(report: Report): string {
  const seeds = [...new Set(report.groups.map((g) => g.seed))];
  const out: string[] = [];
  for (const seed of seeds) {
    const groups = report.groups.filter((g) => g.seed === seed);
    const charts: string[] = [];
    for (const m of METRICS) {
      const series = groups.flatMap((g) => {
        const h = g.histograms[m.id];
        return h && h.samples > 0 ? [{ deployment: g.deployment, histogram: h }] : [];
      });
      charts.push(chart(cdfPlot(m.label, series), `CDF of ${m.label}, seed ${seed}`));
    }
    const body = charts.filter((c) => c !== "").join("\n");
    if (body !== "") out.push(`<h3>Latency CDFs, seed ${esc(seed)}</h3>\n<div class="charts">${body}</div>`);
  }
  return out.join("\n");
}

const LOAD_NOTE =
  "Level 0 is the study without load; at L > 0, L autopilot bots (pnpm load) played on the deployment while its Chromium runs were played. " +
  "A deployment saturates at the first level where the pages' frame inter-arrival p99 exceeds 1.5 ticks (50 ms), the engine skips ticks, or games are lost; " +
  "a level the load generator could not hold is not counted against the server. The bots and the servers share this machine's cores.";

/** The Load plots' points: the penalty on input → audio (deployments other than the baseline) and the input → audio median. */
function loadPoints(rows: readonly LoadRow[]): { penalty: LoadPoint[]; audio: LoadPoint[] } {
  const penalty: LoadPoint[] = [];
  const audio: LoadPoint[] = [];
  for (const r of rows) {
    const p = r.penaltyAudio;
    if (p && p.meanMs !== null) penalty.push({ deployment: r.deployment, level: r.level, ms: p.meanMs, low: p.lowMs, high: p.highMs });
    const median = r.audio?.median ?? null;
    if (median !== null) audio.push({ deployment: r.deployment, level: r.level, ms: median });
  }
  return { penalty, audio };
}

/** The Load section (a study with `--load`), or "". */
function htmlLoad(report: Report): string {
  const rows = loadRows(report);
  if (rows.length === 0) return "";
  const points = loadPoints(rows);
  const sentences = rowsByDeployment(rows).map((r) => `<li>${esc(saturationSentence(r))}</li>`).join("\n");
  const axes = { deployments: [...new Set(rows.map((r) => r.deployment))], levels: [...new Set(rows.map((r) => r.level))].sort((a, b) => a - b) };
  const charts = [
    chart(loadPenaltyPlot(points.penalty, axes), "penalty on input to audio against load"),
    chart(loadAudioPlot(points.audio, axes), "input to audio median against load"),
  ]
    .filter((c) => c !== "")
    .join("\n");
  return `<section id="load"><h2>Load</h2>
<p class="note">${esc(LOAD_NOTE)}</p>
<ul>${sentences}</ul>
${htmlTable(loadHumanTable(rows))}
${htmlTable(loadBotTable(rows))}
${charts === "" ? "" : `<div class="charts">${charts}</div>`}
</section>`;
}

/** "N of M measured medians are within the goal …", the line under the What-if sentence. */
function goalSentence(section: WhatifSection): string {
  const { within, measured } = goalCount(section);
  return measured === 0
    ? "No placement of the file was run in this study: nothing to check the predictions against."
    : `${within} of ${measured} predicted medians of placements run in this study are within the goal, ${GOAL_TEXT}.`;
}

/** The What-if section (a study with whatif.json), or "". */
function htmlWhatif(section: WhatifSection | null): string {
  if (section === null) return "";
  return `<section id="whatif"><h2>What-if</h2>
<p class="note">${esc(whatifSentence(section))}</p>
<p class="note">${esc(goalSentence(section))}</p>
${htmlTable(whatifPlacementTable(section))}
${htmlTable(whatifPenaltyTable(section))}
${htmlTable(whatifMedianTable(section))}
</section>`;
}

/** The whole report as one self-contained HTML document (inline CSS and SVG, no external URLs). */
export function renderHtml(report: Report): string {
  const problems = problemsTable(report);
  const hasLoad = loadRows(report).length > 0;
  const whatif = whatifSection(report);
  const nav = report.groups.map((g, i) => `<li><a href="#${groupAnchor(i)}">${esc(groupTitle(g))}</a></li>`).join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>FlapLab measurement report</title>
<style>${CSS}</style>
</head>
<body>
<h1>FlapLab measurement report</h1>
<p class="meta">Generated ${esc(report.generatedAt)} from ${report.inputs.map((i) => `<code>${esc(i)}</code>`).join(", ")}.</p>
<p class="note">${esc(PERCENTILE_NOTE)} Values are ms with 3 significant digits.</p>
<nav><ul>${hasLoad ? '<li><a href="#load">Load</a></li>' : ""}${whatif ? '<li><a href="#whatif">What-if</a></li>' : ""}${nav}</ul></nav>
<section id="comparison"><h2>Comparison</h2>
${htmlTable(comparisonTable(report))}
${htmlTable(penaltyTable(report))}
${htmlTable(duetTable(report))}
${htmlTable(cpuTable(report))}
${htmlCdfs(report)}
</section>
${htmlLoad(report)}
${htmlWhatif(whatif)}
${problems.rows.length > 0 ? `<section id="problems"><h2>Unreadable runs and files</h2>\n${htmlTable(problems)}</section>` : ""}
${report.groups.map((g, i) => htmlGroup(g, i)).join("\n")}
</body>
</html>
`;
}

// ---------- Markdown ----------

function mdTable(t: Table): string {
  if (t.rows.length === 0) return "";
  const align = t.headers.map((_, i) => (i < t.textColumns ? "l" : "r") as "l" | "r");
  return [`**${markdownCell(t.caption)}**`, "", renderTable({ headers: t.headers, rows: t.rows, align, compact: true }), ""].join("\n");
}

/** The report's tables as Markdown. */
export function renderMarkdown(report: Report): string {
  const out = [
    "# FlapLab measurement report",
    "",
    `Generated ${report.generatedAt} from ${report.inputs.map((i) => `\`${i}\``).join(", ")}.`,
    "",
    `${PERCENTILE_NOTE} Values are ms with 3 significant digits. Plots are in report.html.`,
    "",
    "## Comparison",
    "",
    mdTable(comparisonTable(report)),
    mdTable(penaltyTable(report)),
    mdTable(duetTable(report)),
    mdTable(cpuTable(report)),
  ];
  const load = loadRows(report);
  if (load.length > 0) {
    out.push("## Load", "", `${LOAD_NOTE} Plots are in report.html.`, "");
    for (const r of rowsByDeployment(load)) out.push(`- ${saturationSentence(r)}`);
    out.push("", mdTable(loadHumanTable(load)), mdTable(loadBotTable(load)));
  }
  const whatif = whatifSection(report);
  if (whatif) {
    out.push("## What-if", "", whatifSentence(whatif), goalSentence(whatif), "");
    out.push(mdTable(whatifPlacementTable(whatif)), mdTable(whatifPenaltyTable(whatif)), mdTable(whatifMedianTable(whatif)));
  }
  const problems = problemsTable(report);
  if (problems.rows.length > 0) out.push("## Unreadable runs and files", "", mdTable(problems));
  for (const g of report.groups) {
    const failed = g.runs.filter((r) => r.status === "failed").length;
    const unreadable = g.runs.filter((r) => r.status === "unreadable").length;
    out.push(`## ${groupTitle(g)}`, "", `${g.runs.length} run(s): ${g.pooled.length} pooled, ${failed} failed, ${unreadable} unreadable. Source: ${g.sources.join(", ")}.`, "");
    if (g.sources.includes("flappygo")) out.push(FLAPPYGO_NOTE, "");
    out.push(mdTable(latencyTable(g)));
    out.push(g.rpc.length > 0 ? mdTable(rpcTable(g)) : "No RPC records.\n");
    out.push(mdTable(runsTable(g)));
    const faults = faultsTable(g);
    if (faults.rows.length > 0) out.push(mdTable(faults));
    const failures = failuresTable(g);
    if (failures.rows.length > 0) out.push(mdTable(failures));
  }
  return `${out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}

// ---------- CSV / JSON ----------

export const METRICS_CSV_HEADER = ["deployment", "seed", "metric", ...STAT_KEYS] as const;

/**
 * Long format: one line per deployment × seed × metric (metric ids, then `rpc:<src>-><dst>:<verb>`,
 * and `rpc:<src>-><dst>:<verb>:callee` for the callee's share of a networked call).
 * Metrics a source cannot provide are left out; empty cells mean no samples.
 */
export function renderMetricsCsv(report: Report): string {
  const lines = [METRICS_CSV_HEADER.join(",")];
  for (const g of report.groups) {
    const rows = [
      ...METRICS.flatMap((m) => {
        const s = g.metrics[m.id];
        return s === null ? [] : [{ metric: m.id, stats: s }];
      }),
      ...g.rpc.map((r) => ({ metric: `rpc:${r.src}->${r.dst}:${r.verb}${r.side === "callee" ? ":callee" : ""}`, stats: r.stats })),
    ];
    for (const { metric, stats } of rows) {
      lines.push([g.deployment, g.seed, metric, ...STAT_KEYS.map((k) => stats[k])].map(csvCell).join(","));
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The same numbers as the tables, plus every run's raw samples (ms). */
export function metricsJson(report: Report): unknown {
  const penalties = pairedPenalties(report.groups);
  const duets = duetPenalties(report.groups);
  return {
    format: REPORT_FORMAT,
    generatedAt: report.generatedAt,
    inputs: report.inputs,
    unit: "ms",
    percentiles: PERCENTILE_NOTE,
    groups: report.groups.map((g) => ({
      deployment: g.deployment,
      seed: g.seed,
      sources: g.sources,
      runCount: g.runs.length,
      pooledRunCount: g.pooled.length,
      metrics: g.metrics,
      serverCpu: cpuRows(g),
      penalties: penalties.filter((p) => p.deployment === g.deployment && p.seed === g.seed),
      duet: duets.filter((p) => p.deployment === g.deployment && p.seed === g.seed),
      rpc: g.rpc.map((r) => ({ src: r.src, dst: r.dst, verb: r.verb, label: r.label, stats: r.stats })),
      runs: g.runs.map((r) => ({
        id: r.id,
        dir: r.dir,
        source: r.source,
        status: r.status,
        pooled: g.pooled.includes(r),
        reason: r.reason,
        stage: r.stage,
        score: r.score,
        expected: r.expected,
        ticks: r.ticks,
        attempt: r.attempt,
        retries: r.retries,
        dispatchLatenessMs: r.dispatchLateness,
        gameId: r.gameId,
        notes: r.notes,
        values: r.values,
        rpc: r.rpc,
        serverCpu: r.serverCpu,
      })),
    })),
    load: loadRows(report).map((r) => ({ ...r, bots: r.bots === null ? null : { games: r.bots.games, latency: r.bots.latency, verdict: r.bots.verdict, workerCpuPct: r.bots.workerCpuPct } })),
    whatif: whatifJson(whatifSection(report)),
    problems: report.problems,
  };
}
