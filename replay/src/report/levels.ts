// The load levels of a study (`pnpm study --load`): per deployment and level, the study's
// level.json (the measured window, the servers' CPU over it) and the bots' own summary.json,
// both in <study>/load/<deployment>@<level>/.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { LoadSummary } from "@flaplab/load/src/summary.js";
import { parseCsv } from "./csv.js";
import type { Problem } from "./load.js";

/** The format of `level.json`, the study's record of one deployment at one load level. */
export const LEVEL_FORMAT = "flaplab-load-level/1";

/** A server process's CPU over a level's measured window. */
export interface LevelCpu {
  readonly group: string;
  readonly components: readonly string[];
  readonly cpuUs: number | null;
  /** cpuUs ÷ the window: % of one core. */
  readonly pct: number | null;
}

/** `level.json`: the study's record of one deployment at one level, beside the bots' summary.json. */
export interface LevelRecord {
  readonly format: typeof LEVEL_FORMAT;
  /** The deployment's name and level (`<deployment>@<level>`): the folder of this record and the bots' files. */
  readonly deployment: string;
  /** The folders the Chromium runs of the window are filed under (one per stream link: `<deployment>+websocket@<level>`). */
  readonly runFolders: readonly string[];
  readonly level: number;
  readonly workers: number;
  readonly loadDurationMs: number;
  /** When the bots' run started and when it stopped starting games (epoch ms). */
  readonly loadStartedAt: number;
  readonly loadEndsAt: number;
  /** The measured window: the Chromium runs, from the first's start to the last's end (epoch ms). */
  readonly windowStartedAt: number;
  readonly windowEndedAt: number;
  /** Whether the bots played through the whole window. */
  readonly covered: boolean;
  /** The fewest bot games in flight in any whole second of the window (null: no second fell in it). */
  readonly minInFlight: number | null;
  readonly cpu: readonly LevelCpu[];
}

/** The bot games that were going on while the Chromium runs were played (from the bots' games.csv). */
export interface WindowGames {
  /** Games whose start and end bracket any part of the window. */
  readonly games: number;
  readonly completed: number;
  readonly failed: number;
  /** Failed games by reason. */
  readonly failures: Readonly<Record<string, number>>;
}

/** One deployment at one level: the study's record and the bots' summary (null when it could not be read). */
export interface LoadLevel {
  readonly dir: string;
  readonly record: LevelRecord;
  readonly bots: LoadSummary | null;
  /** The bot games of the measured window; null without a readable games.csv. */
  readonly window: WindowGames | null;
}

/**
 * The bot games of games.csv (times in ms from the load's start) that overlap the record's window:
 * what the bots went through while the measured runs were played, without the ramp's and the
 * drain's games.
 */
export function windowGames(csv: string, record: LevelRecord): WindowGames {
  const table = parseCsv(csv, ["start_ms", "end_ms", "outcome", "reason"]);
  const from = record.windowStartedAt - record.loadStartedAt;
  const to = record.windowEndedAt - record.loadStartedAt;
  const failures: Record<string, number> = {};
  let games = 0;
  let completed = 0;
  let failed = 0;
  for (const { cells } of table.rows) {
    const start = Number(cells["start_ms"]);
    const end = Number(cells["end_ms"]);
    if (!(end >= from && start <= to)) continue;
    games++;
    if (cells["outcome"] === "completed") completed++;
    if (cells["outcome"] === "failed") {
      failed++;
      const reason = cells["reason"] ?? "";
      failures[reason] = (failures[reason] ?? 0) + 1;
    }
  }
  return { games, completed, failed, failures };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, "utf8"));
}

function levelRecordOf(v: unknown): LevelRecord | string {
  if (!isObject(v)) return "not a JSON object";
  if (v["format"] !== LEVEL_FORMAT) return `format is not ${LEVEL_FORMAT}`;
  if (typeof v["deployment"] !== "string" || !Array.isArray(v["runFolders"]) || typeof v["level"] !== "number" || !Array.isArray(v["cpu"])) {
    return "deployment, runFolders, level or cpu missing";
  }
  return v as unknown as LevelRecord;
}

function botsOf(v: unknown): LoadSummary | string {
  if (!isObject(v)) return "not a JSON object";
  if (!isObject(v["games"]) || !isObject(v["latency"]) || typeof v["verdict"] !== "string") return "games, latency or verdict missing";
  return v as unknown as LoadSummary;
}

/**
 * Reads every `<dir>/<deployment>@<level>/level.json` and its summary.json. A folder whose
 * level.json cannot be read is a problem (listed in the report); a missing or unreadable bots'
 * summary keeps the level with `bots: null` and a problem.
 */
export async function readLoadLevels(dir: string): Promise<{ levels: LoadLevel[]; problems: Problem[] }> {
  const levels: LoadLevel[] = [];
  const problems: Problem[] = [];
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) return { levels, problems };
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  for (const name of entries) {
    const folder = join(dir, name);
    const levelPath = join(folder, "level.json");
    let record: LevelRecord | string;
    try {
      record = levelRecordOf(await readJson(levelPath));
    } catch (err) {
      record = (err as Error).message;
    }
    if (typeof record === "string") {
      problems.push({ path: levelPath, reason: `not a load level: ${record}` });
      continue;
    }
    const botsPath = join(folder, "summary.json");
    let bots: LoadSummary | string;
    try {
      bots = botsOf(await readJson(botsPath));
    } catch (err) {
      bots = (err as Error).message;
    }
    if (typeof bots === "string") problems.push({ path: botsPath, reason: `the bots' summary cannot be read: ${bots}` });
    const gamesPath = join(folder, "games.csv");
    let window: WindowGames | null = null;
    try {
      window = windowGames(await readFile(gamesPath, "utf8"), record);
    } catch (err) {
      problems.push({ path: gamesPath, reason: `the bots' games cannot be read: ${(err as Error).message}` });
    }
    levels.push({ dir: folder, record, bots: typeof bots === "string" ? null : bots, window });
  }
  return { levels, problems };
}
