// What a run comes to: the figures merged over the workers, the summary table and its verdict,
// and the files of --out (summary.json and one CSV per metric, games and seconds).
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { csvRow } from "@flaplab/report-kit";
import type { RunResult } from "./coordinator.js";
import { LatencyHist, type MsSummary } from "./hist.js";
import { type GameRecord, METRICS, type MetricName } from "./protocol.js";

/** Bot lateness p99 above this, ms, or a worker's CPU above this, %: the generator could not keep up. */
export const LATENESS_LIMIT_MS = 5;
export const CPU_LIMIT_PCT = 85;

/** The percentiles each metric's CSV lists. */
export const CSV_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100] as const;

export interface LoadSummary {
  readonly runId: string;
  readonly url: string;
  readonly link: string;
  readonly bot: string;
  readonly shape: RunResult["options"]["shape"];
  readonly durationMs: number;
  readonly drainMs: number;
  readonly workers: number;
  readonly warmupMs: number;
  /** Intended starts of the schedule (players: first games; arrivals: every game). */
  readonly scheduled: number;
  readonly games: {
    readonly started: number;
    readonly completed: number;
    readonly failed: number;
    readonly unfinished: number;
    /** Games of workers that died or sent no figures: counted nowhere else. */
    readonly lost: number;
  };
  readonly failures: Readonly<Record<string, number>>;
  readonly inputs: number;
  readonly latency: Readonly<Record<MetricName, MsSummary>>;
  readonly workerCpuPct: readonly number[];
  readonly lostWorkers: RunResult["lost"];
  /** Source addresses the bots' calls (and WebSocket streams) came from. */
  readonly sourceAddresses: number;
  readonly note: string | undefined;
  readonly verdict: string;
}

export interface MergedRun {
  readonly summary: LoadSummary;
  readonly hists: Readonly<Record<MetricName, LatencyHist>>;
  readonly games: readonly GameRecord[];
}

export function mergeRun(run: RunResult): MergedRun {
  const hists = Object.fromEntries(METRICS.map((m) => [m, new LatencyHist()])) as Record<MetricName, LatencyHist>;
  for (const f of run.finals) for (const m of METRICS) hists[m].merge(f.hists[m]);
  const games = run.finals.flatMap((f) => f.games).sort((a, b) => a.intendedMs - b.intendedMs || a.bot - b.bot);
  const failures: Record<string, number> = {};
  for (const g of games) if (g.outcome !== "completed") failures[g.reason] = (failures[g.reason] ?? 0) + 1;
  const lostGames = run.lost.reduce((a, l) => a + l.started, 0);
  if (lostGames > 0 || run.lost.length > 0) failures["worker died (its games are not counted)"] = lostGames;
  const cpu = Array.from({ length: run.finals.length + run.lost.length }, (_, w) => run.finals.find((f) => f.worker === w)?.cpuPct ?? Number.NaN);
  const latency = Object.fromEntries(METRICS.map((m) => [m, hists[m].summary()])) as Record<MetricName, MsSummary>;
  const o = run.options;
  const summaryBase = {
    runId: run.runId,
    url: o.url,
    link: o.link,
    bot: o.bot,
    shape: o.shape,
    durationMs: o.durationMs,
    drainMs: o.drainMs,
    workers: cpu.length,
    warmupMs: Math.round(run.warmupMs),
    scheduled: run.scheduled,
    games: {
      started: games.filter((g) => !g.reason.includes("not started")).length + lostGames,
      completed: games.filter((g) => g.outcome === "completed").length,
      failed: games.filter((g) => g.outcome === "failed").length,
      unfinished: games.filter((g) => g.outcome === "unfinished").length,
      lost: lostGames,
    },
    failures,
    inputs: run.finals.reduce((a, f) => a + f.inputs, 0),
    latency,
    workerCpuPct: cpu,
    lostWorkers: run.lost,
    sourceAddresses: new Set(run.finals.flatMap((f) => f.addresses)).size,
    note:
      o.link === "webtransport"
        ? "WebTransport streams all come from 127.0.0.1: the Node WebTransport client cannot bind a source address (the calls are spread)"
        : o.spreadAddresses
          ? undefined
          : "--no-spread: every bot comes from 127.0.0.1, so the servers' per-address limits apply to all of them together",
  };
  return { summary: { ...summaryBase, verdict: verdict(latency["bot-lateness"], cpu, run.lost.length) }, hists, games };
}

/** Whether the figures describe the servers, or a load generator that fell behind. */
export function verdict(lateness: MsSummary, cpuPct: readonly number[], lostWorkers: number): string {
  const problems: string[] = [];
  if (lateness.p99 !== null && lateness.p99 > LATENESS_LIMIT_MS) problems.push(`bot lateness p99 ${lateness.p99.toFixed(2)} ms > ${LATENESS_LIMIT_MS} ms`);
  cpuPct.forEach((c, w) => {
    if (c > CPU_LIMIT_PCT) problems.push(`worker ${w} CPU ${c.toFixed(0)} % > ${CPU_LIMIT_PCT} %`);
  });
  if (lostWorkers > 0) problems.push(`${lostWorkers} worker(s) died`);
  if (problems.length > 0) return `verdict: the load generator could not hold this level (${problems.join("; ")}): these latencies are partly the client's, not the server's`;
  return `verdict: the load generator held this level (bot lateness p99 ≤ ${LATENESS_LIMIT_MS} ms, every worker's CPU ≤ ${CPU_LIMIT_PCT} %): the latencies are the deployment's`;
}

const ms = (v: number | null) => (v === null ? "–" : v >= 100 ? v.toFixed(0) : v.toFixed(2));

/** The summary as text: games, latencies (ms), failures, lateness, CPU, and the verdict. */
export function renderSummary(s: LoadSummary): string {
  const g = s.games;
  const shape = s.shape.kind === "players" ? `${s.shape.players} players (ramp ${s.shape.rampMs / 1000} s)` : `${s.shape.rate} games/s (${s.shape.arrivals})`;
  const lines = [
    `load ${s.runId}: ${shape} for ${s.durationMs / 1000} s + drain ${s.drainMs / 1000} s, ${s.bot} bots over ${s.link}, ${s.workers} worker(s), from ${s.sourceAddresses} source address(es); warm-up ${(s.warmupMs / 1000).toFixed(1)} s`,
    `games: started ${g.started}, completed ${g.completed}, failed ${g.failed}, unfinished at drain ${g.unfinished}, lost ${g.lost}; inputs sent ${s.inputs}`,
    "",
    `${"metric (ms)".padEnd(22)}${["samples", "p50", "p90", "p99", "p99.9", "max"].map((h) => h.padStart(10)).join("")}`,
  ];
  for (const m of METRICS) {
    const l = s.latency[m];
    lines.push(`${m.padEnd(22)}${[String(l.samples), ms(l.p50), ms(l.p90), ms(l.p99), ms(l.p999), ms(l.max)].map((c) => c.padStart(10)).join("")}`);
  }
  lines.push("");
  const failures = Object.entries(s.failures).sort((a, b) => b[1] - a[1]);
  lines.push(failures.length === 0 ? "failures: none" : `failures: ${failures.map(([r, n]) => `${r}: ${n}`).join("; ")}`);
  for (const l of s.lostWorkers) lines.push(`worker ${l.worker} ${l.why}; it had started ${l.started} game(s)`);
  const late = s.latency["bot-lateness"];
  lines.push(`bot lateness: p50 ${ms(late.p50)} ms, p99 ${ms(late.p99)} ms, max ${ms(late.max)} ms`);
  lines.push(`worker CPU: ${s.workerCpuPct.map((c, w) => `worker ${w} ${Number.isNaN(c) ? "–" : `${c.toFixed(0)} %`}`).join(", ")}`);
  if (s.note) lines.push(`note: ${s.note}`);
  lines.push(s.verdict);
  return lines.join("\n");
}

/** The CSV of one metric: one row per percentile, ms. */
export function metricCsv(h: LatencyHist): string {
  const rows = [csvRow(["percentile", "value_ms", "samples"])];
  for (const p of CSV_PERCENTILES) rows.push(csvRow([p, h.atMs(p), h.samples]));
  return `${rows.join("\n")}\n`;
}

export const GAME_COLUMNS = ["worker", "bot", "game_id", "seed", "intended_start_ms", "start_ms", "end_ms", "outcome", "reason", "score", "ticks", "simulator_score", "presses", "reconnections"] as const;
export const SECOND_COLUMNS = ["t_s", "started", "finished", "failed", "in_flight", "inputs_per_s", "bot_lateness_p99_ms", "worker_cpu_pct"] as const;

export function gamesCsv(games: readonly GameRecord[]): string {
  const r = (v: number) => Math.round(v * 1000) / 1000;
  const rows = [csvRow(GAME_COLUMNS), ...games.map((g) => csvRow([g.worker, g.bot, g.gameId, g.seed, r(g.intendedMs), r(g.startedMs), r(g.endedMs), g.outcome, g.reason, g.score, g.ticks, g.simulatorScore, g.presses, g.reconnections]))];
  return `${rows.join("\n")}\n`;
}

export function secondsCsv(run: RunResult): string {
  const rows = [csvRow(SECOND_COLUMNS), ...run.seconds.map((s) => csvRow([s.t, s.started, s.finished, s.failed, s.inFlight, s.inputs, s.latenessP99Ms, s.cpuPct.map((c) => c.toFixed(1)).join(" ")]))];
  return `${rows.join("\n")}\n`;
}

/** Writes summary.json, <metric>.csv, games.csv and seconds.csv into `dir`. */
export async function writeOut(dir: string, run: RunResult, merged: MergedRun): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "summary.json"), `${JSON.stringify(merged.summary, null, 2)}\n`);
  for (const m of METRICS) await writeFile(join(dir, `${m}.csv`), metricCsv(merged.hists[m]));
  await writeFile(join(dir, "games.csv"), gamesCsv(merged.games));
  await writeFile(join(dir, "seconds.csv"), secondsCsv(run));
}
