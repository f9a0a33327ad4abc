// Section 5: input-to-effect and input-to-audio in headless Chromium against the monolith on
// loopback, with the replay runner (the easy trace, N runs) and the report's metric definitions.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { flapLabMetrics, LatencyHistogram, parseLatencyCsv, type MetricId, type Stats } from "@flaplab/replay/report";
import { parseReplayArgs } from "../../replay/src/run/options.js";
import { replay } from "../../replay/src/run/runner.js";
import { startStudyDeployment, topologyOnFreePorts } from "../../replay/src/study/deployment.js";
import { repoDir } from "./child.js";
import { EASY_TRACE } from "./frames.js";
import type { GoalResult, RunOptions, SectionResult } from "./section.js";
import { count, sig } from "./table.js";

export const INPUT_GOAL_MS = 2;

const METRICS: { id: MetricId; label: string; goal: boolean }[] = [
  { id: "input_to_effect", label: "input → effect (first frame reflecting the input)", goal: true },
  { id: "input_to_audio", label: "input → audio (its flap sound)", goal: true },
  { id: "input_to_next_frame", label: "input → next tick frame", goal: false },
  { id: "frame_inter_arrival", label: "tick frame inter-arrival", goal: false },
];

export interface Monolith {
  readonly webUrl: string;
  stop(): Promise<void>;
}

/** `pnpm dev` of the monolith topology on free loopback ports, with its data in `dir`. */
export async function startMonolith(dir: string, log: (l: string) => void): Promise<Monolith> {
  const topology = await topologyOnFreePorts("monolith");
  const deployment = await startStudyDeployment(topology.file, join(dir, "data"));
  log(`  browser: monolith up, web at ${deployment.webUrl}`);
  return {
    webUrl: deployment.webUrl,
    async stop() {
      await deployment.stop();
      await rm(topology.dir, { recursive: true, force: true });
    },
  };
}

export interface BrowserMetric {
  readonly id: MetricId;
  readonly stats: Stats;
}

interface Pass {
  readonly folders: string[];
  readonly ok: number;
}

/** The easy trace `runs` times through the replay runner; `stock` keeps Chromium's input deferral. */
async function replayPass(webUrl: string, out: string, runs: number, stock: boolean, log: (l: string) => void): Promise<Pass> {
  const args = ["--url", webUrl, "--trace", join(repoDir(), EASY_TRACE), "--runs", String(runs), "--out", out];
  const replayOpts = await parseReplayArgs(stock ? [...args, "--stock-scheduling"] : args, repoDir());
  const report = await replay(replayOpts, (l) => log(`  browser${stock ? " (stock scheduling)" : ""}: ${l}`));
  return { folders: report.folders, ok: report.ok };
}

/** Pooled histograms of the ok runs of a pass, and how many runs were pooled. */
async function pool(pass: Pass): Promise<{ runs: number; stats: Map<MetricId, Stats> }> {
  const pooled = new Map<MetricId, LatencyHistogram>(METRICS.map((m) => [m.id, new LatencyHistogram()]));
  let runs = 0;
  for (const folder of pass.folders) {
    const summary = JSON.parse(await readFile(join(folder, "summary.json"), "utf8")) as { status: string; latency: { authMs: number | null; startMs: number | null } };
    if (summary.status !== "ok") continue;
    runs++;
    const values = flapLabMetrics(parseLatencyCsv(await readFile(join(folder, "latency.csv"), "utf8")), summary.latency);
    for (const m of METRICS) pooled.get(m.id)!.add(LatencyHistogram.of(values[m.id] ?? []));
  }
  return { runs, stats: new Map(METRICS.map((m) => [m.id, pooled.get(m.id)!.stats()])) };
}

export async function runBrowser(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const runs = opts.quick ? 1 : 3;
  const dir = await mkdtemp(join(opts.workDir, "browser-"));
  const monolith = await startMonolith(dir, opts.log);
  let measured: Pass;
  let stock: Pass;
  try {
    measured = await replayPass(monolith.webUrl, join(dir, "runs"), runs, false, opts.log);
    stock = await replayPass(monolith.webUrl, join(dir, "runs-stock"), runs, true, opts.log);
  } finally {
    await monolith.stop();
  }
  const main = await pool(measured);
  const withDeferral = await pool(stock);
  const metrics: BrowserMetric[] = METRICS.map((m) => ({ id: m.id, stats: main.stats.get(m.id)! }));
  const stockMetrics: BrowserMetric[] = METRICS.filter((m) => m.goal).map((m) => ({ id: m.id, stats: withDeferral.stats.get(m.id)! }));
  const goals: GoalResult[] = METRICS.filter((m) => m.goal).map((m) => {
    const s = main.stats.get(m.id)!;
    return { section: "5", goal: `${m.id.replaceAll("_", "-")} p50 ≤ ${INPUT_GOAL_MS} ms`, measured: `${sig(s.median)} ms`, met: s.median === null ? null : s.median <= INPUT_GOAL_MS };
  });
  const row = (label: string, pooledRuns: number, s: Stats, goal: GoalResult | undefined) => [
    label,
    String(pooledRuns),
    count(s.samples),
    sig(s.median),
    sig(s.p99),
    sig(s.max),
    goal ? `p50 ≤ ${INPUT_GOAL_MS} ms` : "",
    goal ? (goal.met === null ? "n/a" : goal.met ? "met" : "missed") : "",
  ];
  return {
    id: "browser",
    title: "5. Input latency in headless Chromium against the monolith on loopback (ms)",
    table: {
      headers: ["Metric", "Runs", "Samples", "p50 ms", "p99 ms", "max ms", "Goal", "Met"],
      align: ["l", "r", "r", "r", "r", "r", "l", "l"],
      rows: [
        ...METRICS.map((m) => row(m.label, main.runs, main.stats.get(m.id)!, goals.find((x) => x.goal.startsWith(m.id.replaceAll("_", "-"))))),
        ...stockMetrics.map((x) => row(`${METRICS.find((m) => m.id === x.id)!.label}, Chromium's stock scheduling`, withDeferral.runs, x.stats, undefined)),
      ],
    },
    notes: [
      `\`pnpm dev\` of the monolith topology on free loopback ports; the replay runner plays the easy trace ${runs}× in a fresh headless Chromium (${measured.ok}/${runs} runs ok); pooled percentiles from the runs' latency.csv with the report's definitions (page clock).`,
      `The last rows replay with \`--stock-scheduling\` (${stock.ok}/${runs} runs ok): Chromium then holds the page's network tasks after each key press until its next frame is painted, which adds up to one display frame (16.7 ms) to every sample. The other rows turn that deferral off, as the replay runner does by default.`,
    ],
    goals,
    data: { runs, ok: measured.ok, metrics, stockScheduling: { ok: stock.ok, metrics: stockMetrics } },
    seconds: (performance.now() - started) / 1000,
  };
}
