// The report's Load section (`pnpm study --load`): per deployment, one row per load level with the
// human traces' latencies, the paired penalty against the monolith at the same level, whether the
// deployment kept its ticks, the games lost, the bots' own figures and the servers' CPU; and a
// sentence per deployment naming the level where it saturated.
import { LatencyHistogram, type Stats } from "@flaplab/report-kit/latency";
import type { LoadSummary } from "@flaplab/load/src/summary.js";
import { type Group, type Report, splitLevel } from "./aggregate.js";
import type { WindowGames } from "./levels.js";
import type { MetricId } from "./metrics.js";
import { baselineOf, bootstrapMean, CONFIDENCE, roundOf, runMedian } from "./paired.js";
import { formatMs, NONE, type Table } from "./tables.js";

/** One tick of the engine's clock, ms. */
export const TICK_MS = 1000 / 30;
/** A deployment keeps its ticks while the pages' frame inter-arrival p99 stays within 1.5 ticks, ms. */
export const FRAME_P99_LIMIT_MS = 1.5 * TICK_MS;

/** A penalty against the baseline at the same level, pooled over the seeds (run N paired with run N of the same seed). */
export interface LevelPenalty {
  readonly pairs: number;
  readonly meanMs: number | null;
  readonly lowMs: number | null;
  readonly highMs: number | null;
}

/** One deployment at one level. */
export interface LoadRow {
  /** The deployment without its level ("microservices", "monolith+websocket"). */
  readonly deployment: string;
  readonly level: number;
  /** Chromium runs: ok, all, failed, and failed other than off the simulator's score (lost). */
  readonly runs: { readonly ok: number; readonly all: number; readonly failed: number; readonly lost: number };
  /** The Chromium runs' samples pooled over the seeds. */
  readonly audio: Stats | null;
  readonly effect: Stats | null;
  readonly start: Stats | null;
  readonly frames: Stats | null;
  /** Null for the baseline itself. */
  readonly penaltyAudio: LevelPenalty | null;
  readonly penaltyEffect: LevelPenalty | null;
  /** The engine's tick lateness over the runs (median of the runs' p50, the largest max, ticks skipped summed); null when no run recorded it. */
  readonly engine: { readonly latenessP50Ms: number | null; readonly latenessMaxMs: number | null; readonly skipped: number } | null;
  /** The bots' summary at this level (null at level 0, or when it could not be read). */
  readonly bots: LoadSummary | null;
  /**
   * Bot games that failed while the Chromium runs were played (all the run's failed games where
   * the bots' games.csv is missing), and games lost with a worker; not those that ended off the
   * simulator's score (`offScore`). Games still running when the load's drain ended (unfinished)
   * are not counted: the load's end cut them, not the server.
   */
  readonly botGamesLost: number;
  /**
   * Games that ended and were recorded, but not at the simulator's score: Chromium runs and bot
   * games (while the runs were played) where a press was applied a tick later than meant. Not lost:
   * what a player feels as a press that came too late.
   */
  readonly offScore: number;
  /** The bot games of the measured window (null without games.csv). */
  readonly window: WindowGames | null;
  /** Chromium runs failed (other than off the simulator's score) + bot games lost. */
  readonly gamesLost: number;
  /** Whether the load generator held the level; null without bots. */
  readonly held: boolean | null;
  /** Why it did not ("bot lateness p99 7.10 ms > 5 ms"), else null. */
  readonly notHeldBecause: string | null;
  /** Whether the bots played through every measured run; null without bots. */
  readonly covered: boolean | null;
  /** Each server process's CPU, % of one core, while the Chromium runs were played. */
  readonly cpu: readonly { readonly group: string; readonly pct: number | null }[];
}

function pooled(groups: readonly Group[], metric: MetricId): Stats | null {
  const merged = new LatencyHistogram();
  let any = false;
  for (const g of groups) {
    const h = g.histograms[metric];
    if (h) {
      merged.add(h);
      any = true;
    }
  }
  return any ? merged.stats() : null;
}

/** The mean of run-by-run differences against the baseline's groups, pairs from every seed. */
function levelPenalty(groups: readonly Group[], baseGroups: readonly Group[], metric: MetricId): LevelPenalty {
  const diffs: number[] = [];
  for (const g of groups) {
    const base = baseGroups.find((b) => b.seed === g.seed);
    if (!base) continue;
    const baseByRound = new Map<number, number>();
    for (const run of base.pooled) {
      const r = roundOf(run);
      const m = runMedian(run, metric);
      if (r !== null && m !== null) baseByRound.set(r, m);
    }
    for (const run of g.pooled) {
      const r = roundOf(run);
      const m = runMedian(run, metric);
      const b = r === null ? undefined : baseByRound.get(r);
      if (m !== null && b !== undefined) diffs.push(m - b);
    }
  }
  if (diffs.length < 2) return { pairs: diffs.length, meanMs: diffs[0] ?? null, lowMs: null, highMs: null };
  const { mean, low, high } = bootstrapMean(diffs);
  return { pairs: diffs.length, meanMs: mean, lowMs: low, highMs: high };
}

/** Why the load generator could not hold its level, from its verdict line; null when it held it. */
export function notHeldReason(verdict: string): string | null {
  const m = /could not hold this level \((.*)\): /.exec(verdict);
  if (m) return m[1]!;
  return verdict.includes("could not hold") ? "see its verdict" : null;
}

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1]!;
}

/** Whether the report holds a study with load levels. */
export function hasLoadLevels(report: Report): boolean {
  return (report.levels?.length ?? 0) > 0 || report.groups.some((g) => splitLevel(g.deployment).level > 0);
}

/** The load generator's reason for a bot game that ended off the simulator's score. */
const BOT_OFF_SCORE = "score differs from the simulator";
/** The runner's reason for a Chromium run that ended off the simulator's score. */
const RUN_OFF_SCORE = /differs from the simulator's/;

/** Every deployment × level of the study, deployments in the report's order, levels ascending. */
export function loadRows(report: Report): LoadRow[] {
  if (!hasLoadLevels(report)) return [];
  const keys: { deployment: string; level: number }[] = [];
  for (const g of report.groups) {
    const k = splitLevel(g.deployment);
    if (!keys.some((x) => x.deployment === k.name && x.level === k.level)) keys.push({ deployment: k.name, level: k.level });
  }
  const order = [...new Set(keys.map((k) => k.deployment))];
  keys.sort((a, b) => order.indexOf(a.deployment) - order.indexOf(b.deployment) || a.level - b.level);
  const named = (deployment: string, level: number) => report.groups.filter((g) => g.deployment === (level === 0 ? deployment : `${deployment}@${level}`));
  return keys.map(({ deployment, level }) => {
    const full = level === 0 ? deployment : `${deployment}@${level}`;
    const groups = named(deployment, level);
    const runs = groups.flatMap((g) => g.runs);
    const isBaseline = baselineOf(full) === full;
    const baseGroups = report.groups.filter((g) => g.deployment === baselineOf(full));
    const penalty = (metric: MetricId) => (isBaseline || baseGroups.length === 0 ? null : levelPenalty(groups, baseGroups, metric));
    const ticks = runs.flatMap((r) => (r.status === "ok" && r.engineTicks ? [r.engineTicks] : []));
    const level_ = report.levels?.find((l) => l.record.runFolders.includes(full));
    const bots = level_?.bots ?? null;
    const window = level_?.window ?? null;
    const botFailures = window ? window.failures : (bots?.failures ?? {});
    const botOffScore = bots ? (botFailures[BOT_OFF_SCORE] ?? 0) : 0;
    const botGamesLost = bots ? (window ? window.failed : bots.games.failed) - botOffScore + bots.games.lost : 0;
    const failed = runs.filter((r) => r.status !== "ok").length;
    const runsOffScore = runs.filter((r) => r.status === "failed" && r.reason !== null && RUN_OFF_SCORE.test(r.reason)).length;
    const notHeldBecause = bots ? notHeldReason(bots.verdict) : null;
    return {
      deployment,
      level,
      runs: { ok: groups.reduce((a, g) => a + g.pooled.length, 0), all: runs.length, failed, lost: failed - runsOffScore },
      audio: pooled(groups, "input_to_audio"),
      effect: pooled(groups, "input_to_effect"),
      start: pooled(groups, "start_game"),
      frames: pooled(groups, "frame_inter_arrival"),
      penaltyAudio: penalty("input_to_audio"),
      penaltyEffect: penalty("input_to_effect"),
      engine:
        ticks.length === 0
          ? null
          : {
              latenessP50Ms: median(ticks.flatMap((t) => (t.latenessP50Ms === null ? [] : [t.latenessP50Ms]))),
              latenessMaxMs: ticks.reduce<number | null>((a, t) => (t.latenessMaxMs === null ? a : Math.max(a ?? 0, t.latenessMaxMs)), null),
              skipped: ticks.reduce((a, t) => a + (t.skipped ?? 0), 0),
            },
      bots,
      botGamesLost,
      offScore: runsOffScore + botOffScore,
      window,
      gamesLost: failed - runsOffScore + botGamesLost,
      held: bots ? notHeldBecause === null : null,
      notHeldBecause,
      covered: level_ ? level_.record.covered : null,
      cpu: level_ ? level_.record.cpu.map((c) => ({ group: c.group, pct: c.pct })) : cpuOfRuns(groups),
    };
  });
}

/**
 * Without a level record (level 0): each process's CPU over the runs' own games, Σ CPU ÷ Σ window,
 * the play alone (first input to game over) where the runs split it off, so the login's password
 * hash does not weigh on a window of one game.
 */
function cpuOfRuns(groups: readonly Group[]): { group: string; pct: number | null }[] {
  const sums = new Map<string, { cpuUs: number; windowMs: number }>();
  for (const run of groups.flatMap((g) => g.pooled)) {
    const cpu = run.serverCpu;
    if (!cpu) continue;
    const play = cpu.playWindowMs !== null && cpu.groups.every((g) => g.playCpuUs !== null);
    for (const g of cpu.groups) {
      const s = sums.get(g.group) ?? { cpuUs: 0, windowMs: 0 };
      s.cpuUs += play ? g.playCpuUs! : g.cpuUs;
      s.windowMs += play ? cpu.playWindowMs! : cpu.windowMs;
      sums.set(g.group, s);
    }
  }
  return [...sums].map(([group, s]) => ({ group, pct: s.windowMs > 0 ? (s.cpuUs / 1000 / s.windowMs) * 100 : null }));
}

/** What shows a deployment stopped keeping up at a row: slow ticks, skipped ticks, games lost. */
export function symptoms(row: LoadRow): string[] {
  const out: string[] = [];
  const p99 = row.frames?.p99 ?? null;
  if (p99 !== null && p99 > FRAME_P99_LIMIT_MS) out.push(`frame inter-arrival p99 ${p99.toFixed(1)} ms > ${FRAME_P99_LIMIT_MS.toFixed(0)} ms (1.5 ticks)`);
  if (row.engine && row.engine.skipped > 0) out.push(`the engine skipped ${row.engine.skipped} tick(s)`);
  if (row.runs.lost > 0) out.push(`${row.runs.lost} Chromium run(s) failed`);
  if (row.botGamesLost > 0) {
    const reasons = Object.entries(row.window?.failures ?? row.bots?.failures ?? {})
      .filter(([reason]) => reason !== BOT_OFF_SCORE)
      .sort((a, b) => b[1] - a[1])
      .map(([reason, n]) => `${reason}: ${n}`);
    out.push(`${row.botGamesLost} bot game(s) failed or lost${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`);
  }
  return out;
}

const players = (level: number): string => `${level} player${level === 1 ? "" : "s"}`;

/**
 * One sentence per deployment: the first level where it stopped keeping its ticks or lost games.
 * A level the load generator could not hold is not counted against the server.
 */
export function saturationSentence(rows: readonly LoadRow[]): string {
  const deployment = rows[0]?.deployment ?? "";
  const notHeld = rows.filter((r) => r.held === false);
  const caveat =
    notHeld.length === 0
      ? ""
      : ` At ${notHeld.map((r) => players(r.level)).join(", ")} the load generator could not hold the level (${notHeld.map((r) => r.notHeldBecause).join("; ")}), so ${notHeld.length === 1 ? "that level says" : "those levels say"} nothing of the server.`;
  const offScore = rows.filter((r) => r.held !== false && r.offScore > 0);
  const late =
    offScore.length === 0
      ? ""
      : ` Games ended off the simulator's score (a press applied a tick late): ${offScore.map((r) => `${r.offScore} at ${players(r.level)}`).join(", ")}.`;
  for (const row of rows) {
    if (row.held === false) continue;
    const s = symptoms(row);
    if (s.length > 0) {
      const where = row.level === 0 ? "already without load" : `at ${players(row.level)}`;
      return `${deployment} saturates ${where}: ${s.join("; ")}.${late}${caveat}`;
    }
  }
  const held = rows.filter((r) => r.held !== false);
  const top = held.at(-1);
  if (!top) return `${deployment}: no level the load generator held.${caveat}`;
  return `${deployment} kept its ticks and lost no game at every level measured${top.level > 0 ? `, up to ${players(top.level)}` : ""}.${late}${caveat}`;
}

/** The rows grouped by deployment, in order. */
export function rowsByDeployment(rows: readonly LoadRow[]): LoadRow[][] {
  const out = new Map<string, LoadRow[]>();
  for (const r of rows) out.set(r.deployment, [...(out.get(r.deployment) ?? []), r]);
  return [...out.values()];
}

const medianP99 = (stats: Stats | null): string => (stats === null || stats.samples === 0 ? NONE : `${formatMs(stats.median)} / ${formatMs(stats.p99)}`);

function penaltyCell(p: LevelPenalty | null): string {
  if (p === null) return "(baseline)";
  if (p.meanMs === null) return NONE;
  return p.lowMs === null || p.highMs === null ? `${formatMs(p.meanMs)} (${p.pairs} pair)` : `${formatMs(p.meanMs)} [${formatMs(p.lowMs)} … ${formatMs(p.highMs)}]`;
}

const pct = (v: number | null): string => (v === null ? NONE : v >= 10 ? v.toFixed(0) : v.toFixed(1));

export const LOAD_HUMAN_HEADERS = [
  "deployment",
  "load (players)",
  "runs (ok / all)",
  "input → audio",
  "input → effect",
  "start game",
  "penalty input → audio",
  "penalty input → effect",
  "frame inter-arrival p99",
  "engine tick lateness p50 / max, skipped",
  "games lost",
  "games off the simulator's score",
] as const;

/** The human traces' side of the Load section: one row per deployment × level. */
export function loadHumanTable(rows: readonly LoadRow[]): Table {
  return {
    kind: "load",
    caption: `Load: the human traces (Chromium) while the bots play; median / p99, ms; penalty against the monolith at the same level, mean of run-by-run differences of the runs' medians [${Math.round(CONFIDENCE * 100)} % bootstrap interval], ms; games lost: Chromium runs failed + bot games that failed while the runs were played or were lost with a worker, not counting games that ended off the simulator's score (counted apart: a press applied a tick late)`,
    textColumns: 1,
    headers: LOAD_HUMAN_HEADERS,
    rows: rows.map((r) => [
      r.deployment,
      String(r.level),
      `${r.runs.ok} / ${r.runs.all}`,
      medianP99(r.audio),
      medianP99(r.effect),
      medianP99(r.start),
      penaltyCell(r.penaltyAudio),
      penaltyCell(r.penaltyEffect),
      formatMs(r.frames?.p99),
      r.engine === null ? NONE : `${formatMs(r.engine.latenessP50Ms)} / ${formatMs(r.engine.latenessMaxMs)}, ${r.engine.skipped}`,
      String(r.gamesLost),
      String(r.offScore),
    ]),
  };
}

export const LOAD_BOT_HEADERS = [
  "deployment",
  "load (players)",
  "bot games (completed / started)",
  "bot games during the runs (completed / failed)",
  "bot games failed, whole load / lost",
  "bot games unfinished at drain",
  "bot start game p50 / p99",
  "bot input → effect p99",
  "load generator",
  "server CPU, % of a core",
] as const;

/** The bots' and the servers' side of the Load section. */
export function loadBotTable(rows: readonly LoadRow[]): Table {
  return {
    kind: "load-bots",
    caption:
      "Load: the bots' own figures (from each action's intended time, ms) and each server process's CPU while the Chromium runs were played (level 0: over the runs' own games, first input to game over)",
    textColumns: 1,
    headers: LOAD_BOT_HEADERS,
    rows: rows.map((r) => {
      const b = r.bots;
      const generator =
        r.held === null ? NONE : r.held ? `held${r.covered === false ? "; the bots ended before the last run" : ""}` : `not held by the load generator (${r.notHeldBecause})`;
      return [
        r.deployment,
        String(r.level),
        b ? `${b.games.completed} / ${b.games.started}` : NONE,
        r.window ? `${r.window.completed} / ${r.window.failed}` : NONE,
        b ? `${b.games.failed} / ${b.games.lost}` : NONE,
        b ? String(b.games.unfinished) : NONE,
        b ? `${formatMs(b.latency["start-game"].p50)} / ${formatMs(b.latency["start-game"].p99)}` : NONE,
        b ? formatMs(b.latency["input-effect"].p99) : NONE,
        generator,
        r.cpu.length === 0 ? NONE : r.cpu.map((c) => `${c.group} ${pct(c.pct)}`).join(", "),
      ];
    }),
  };
}
