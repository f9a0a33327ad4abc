import { medianRpcRange, type Group, type Report } from "./aggregate.js";
import { STAT_HEADERS, STAT_KEYS, type Stats } from "@flaplab/report-kit/latency";
import { cpuRows } from "./cpu.js";
import type { RunData } from "./load.js";
import { COMPARISON_METRICS, METRICS, metricInfo } from "./metrics.js";
import { CONFIDENCE, duetPenalties, pairedPenalties } from "./paired.js";

/** A table as both renderers see it: plain-text cells. */
export interface Table {
  /** "stats" for the latency tables (fixed columns), else what the table lists. */
  readonly kind: "stats" | "runs" | "failures" | "faults" | "comparison" | "problems" | "cpu" | "penalties" | "duet" | "load" | "load-bots" | "whatif" | "whatif-penalties" | "whatif-medians";
  readonly caption: string;
  /** How many leading columns hold text (left-aligned); the rest are numbers. */
  readonly textColumns: number;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export const NA = "n/a";
export const NONE = "–";

/** A ms value with 3 significant digits (whole ms from 1000 up). */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return NONE;
  if (ms === 0) return "0";
  if (Math.abs(ms) >= 1000) return String(Math.round(ms));
  return ms.toPrecision(3);
}

function statCells(stats: Stats | null): string[] {
  if (stats === null) return STAT_KEYS.map(() => NA);
  return STAT_KEYS.map((k) => (k === "samples" ? String(stats.samples) : formatMs(stats[k])));
}

export const LATENCY_HEADERS = ["metric", ...STAT_HEADERS] as const;
export const RPC_HEADERS = ["rpc", ...STAT_HEADERS] as const;
export const RUN_HEADERS = ["run", "status", "score", "expected", "ticks", "retries", "dispatch lateness p50 / max (ms)"] as const;
export const FAILURE_HEADERS = ["run", "status", "stage", "reason"] as const;
export const FAULT_HEADERS = [
  "run",
  "fault",
  "done",
  "score as simulator",
  "recorded",
  "injected at tick",
  "pause (ms)",
  "reconnections",
  "inputs re-sent",
] as const;
export const PROBLEM_HEADERS = ["file", "reason"] as const;
export const COMPARISON_HEADERS = [
  "deployment",
  "seed",
  "runs (ok / all)",
  ...COMPARISON_METRICS.map((id) => metricInfo(id).column),
  "Median RPC",
] as const;

export function groupTitle(group: Group): string {
  return `${group.deployment} × seed ${group.seed}`;
}

export function latencyTable(group: Group): Table {
  return {
    kind: "stats",
    caption: `Latency, ms (${group.pooled.length} pooled run${group.pooled.length === 1 ? "" : "s"})`,
    textColumns: 1,
    headers: LATENCY_HEADERS,
    rows: METRICS.map((m) => [m.label, ...statCells(group.metrics[m.id])]),
  };
}

export function rpcTable(group: Group): Table {
  return {
    kind: "stats",
    caption:
      "Per-RPC latency, ms: the caller's whole call; (callee): the callee's share of a networked call, from its guard to the handler's answer (the rest is the hop: HTTP, sockets, waking the processes)",
    textColumns: 1,
    headers: RPC_HEADERS,
    rows: group.rpc.map((r) => [r.label, ...statCells(r.stats)]),
  };
}

const numText = (v: number | null): string => (v === null ? NONE : String(v));

export function runsTable(group: Group): Table {
  return {
    kind: "runs",
    caption: "Runs: scores achieved vs expected",
    textColumns: 2,
    headers: RUN_HEADERS,
    rows: group.runs.map((r) => {
      const ticks =
        r.ticks !== null && r.expected?.ticks != null && r.expected.ticks !== r.ticks
          ? `${r.ticks} (expected ${r.expected.ticks})`
          : numText(r.ticks);
      const lateness = r.dispatchLateness ? `${formatMs(r.dispatchLateness.p50)} / ${formatMs(r.dispatchLateness.max)}` : NONE;
      return [r.id, r.status, numText(r.score), r.source === "flappygo" ? NA : numText(r.expected?.score ?? null), ticks, numText(r.retries), lateness];
    }),
  };
}

/** The fault of every run that had one (`pnpm study --fault`), and what became of its game. */
export function faultsTable(group: Group): Table {
  const yesNo = (v: boolean | null) => (v === null ? NONE : v ? "yes" : "no");
  return {
    kind: "faults",
    caption: "Faults: the longest wait between two frames of new ticks is the pause",
    textColumns: 5,
    headers: FAULT_HEADERS,
    rows: group.runs.flatMap((r) =>
      r.fault === null
        ? []
        : [
            [
              r.id,
              `${r.fault.kind}@${r.fault.tick ?? "?"}`,
              r.fault.action ?? "not injected (the game ended first)",
              yesNo(r.fault.scoreMatched),
              yesNo(r.fault.recorded),
              numText(r.fault.injectedAtTick),
              r.fault.pauseMs === null ? NONE : formatMs(r.fault.pauseMs),
              numText(r.fault.reconnections),
              numText(r.fault.resentInputs),
            ],
          ],
    ),
  };
}

/** The runs that were not pooled, with why. */
export function failuresTable(group: Group): Table {
  return {
    kind: "failures",
    caption: "Failed and unreadable runs",
    textColumns: FAILURE_HEADERS.length,
    headers: FAILURE_HEADERS,
    rows: group.runs.filter((r) => r.status !== "ok").map((r) => [r.id, r.status, r.stage ?? NONE, r.reason ?? NONE]),
  };
}

const medianP99 = (stats: Stats | null): string =>
  stats === null ? NA : stats.samples === 0 ? NONE : `${formatMs(stats.median)} / ${formatMs(stats.p99)}`;

export function comparisonTable(report: Report): Table {
  return {
    kind: "comparison",
    caption: "All deployments: median / p99, ms",
    textColumns: 2,
    headers: COMPARISON_HEADERS,
    rows: report.groups.map((g) => {
      const range = medianRpcRange(g);
      const rpc = range === null ? NONE : range.low === range.high ? formatMs(range.low) : `${formatMs(range.low)}–${formatMs(range.high)}`;
      return [g.deployment, g.seed, `${g.pooled.length} / ${g.runs.length}`, ...COMPARISON_METRICS.map((id) => medianP99(g.metrics[id])), rpc];
    }),
  };
}

export function problemsTable(report: Report): Table {
  const unreadable = report.groups.flatMap((g) => g.runs.filter((r) => r.status === "unreadable"));
  return {
    kind: "problems",
    caption: "Unreadable runs and files",
    textColumns: PROBLEM_HEADERS.length,
    headers: PROBLEM_HEADERS,
    rows: [...unreadable.map((r: RunData) => [r.dir, r.reason ?? NONE]), ...report.problems.map((p) => [p.path, p.reason])],
  };
}

/** A count with 3 significant digits (whole numbers from 1000 up). */
function formatCount(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return NONE;
  return n >= 1000 ? String(Math.round(n)) : n.toPrecision(3);
}

/** A count per run: whole as it is, else 3 significant digits. */
const perRun = (n: number): string => (Number.isInteger(n) ? String(n) : n.toPrecision(3));

export const CPU_HEADERS = [
  "deployment",
  "seed",
  "process (components)",
  "runs",
  "CPU ms / game",
  "of it, start (ms)",
  "µs / game-second",
  "idle µs / s",
  "net µs / game-second",
  "µs / call",
  "calls (per game)",
  "µs / tick frame",
  "µs / sound",
  "games / core",
] as const;

/** Every deployment's server CPU, per process: the figures that carry to another machine. */
export function cpuTable(report: Report): Table {
  const rows: string[][] = [];
  for (const g of report.groups) {
    for (const r of cpuRows(g)) {
      const perGame = r.runs > 0 ? r.calls.replace(/×(\d+)/g, (_, n: string) => `×${perRun(Number(n) / r.runs)}`) : NONE;
      rows.push([
        g.deployment,
        g.seed,
        `${r.group} (${r.components.join(", ")})`,
        String(r.runs),
        formatCount(r.msPerGame),
        formatCount(r.startMsPerGame),
        formatCount(r.usPerGameSecond),
        formatCount(r.idleUsPerSecond),
        formatCount(r.netUsPerGameSecond),
        formatCount(r.usPerCall),
        perGame || NONE,
        formatCount(r.usPerFrame),
        formatCount(r.usPerSound),
        formatCount(r.gamesPerCore),
      ]);
    }
  }
  return { kind: "cpu", caption:
      "Server CPU (user + system) over each game, login to game over, per server process; of it, the start (login, StartGame, up to the first input); per game-second: the play alone (the first input to game over); idle: the process with no game, per second; net: per game-second beyond idle, what one more game costs; games per core from net", textColumns: 3, headers: CPU_HEADERS, rows };
}

export const PENALTY_HEADERS = ["deployment", "seed", "metric", "pairs", "penalty (ms)", `${Math.round(CONFIDENCE * 100)} % interval (ms)`, "includes 0"] as const;

/** Each deployment's paired penalty against the monolith, per metric, with its bootstrap interval. */
export function penaltyTable(report: Report): Table {
  return {
    kind: "penalties",
    caption: `Penalty against the monolith: the mean of run-by-run differences of the runs' medians (run N of each deployment paired), ${Math.round(CONFIDENCE * 100)} % percentile-bootstrap interval, ms`,
    textColumns: 3,
    headers: PENALTY_HEADERS,
    rows: pairedPenalties(report.groups).map((p) => [
      p.deployment,
      p.seed,
      metricInfo(p.metric).label,
      String(p.pairs),
      formatMs(p.meanMs),
      p.lowMs === null || p.highMs === null ? NONE : `${formatMs(p.lowMs)} … ${formatMs(p.highMs)}`,
      p.includesZero === null ? NONE : p.includesZero ? "yes" : "no",
    ]),
  };
}

export const DUET_HEADERS = ["deployment", "beside", "seed", "metric", "runs", "presses", "penalty (ms)", `${Math.round(CONFIDENCE * 100)} % interval (ms)`, "includes 0", "start skew (ms)"] as const;

/** Each duet's press-by-press penalty (empty without duet runs). */
export function duetTable(report: Report): Table {
  return {
    kind: "duet",
    caption: `Duet, press by press: two deployments playing the same trace at the same time; per run the median of each press's difference (deployment − the one beside it), the mean over runs, ${Math.round(CONFIDENCE * 100)} % percentile-bootstrap interval over runs, ms; start skew: the median gap between the two games' starts`,
    textColumns: 4,
    headers: DUET_HEADERS,
    rows: duetPenalties(report.groups).map((p) => [
      p.deployment,
      p.reference,
      p.seed,
      metricInfo(p.metric).label,
      String(p.pairs),
      String(p.presses),
      formatMs(p.meanMs),
      p.lowMs === null || p.highMs === null ? NONE : `${formatMs(p.lowMs)} … ${formatMs(p.highMs)}`,
      p.includesZero === null ? NONE : p.includesZero ? "yes" : "no",
      formatMs(p.startSkewMs),
    ]),
  };
}
