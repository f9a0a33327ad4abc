import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** One CloudWatch Logs event, as FilterLogEvents returns it (the fields used here). */
export interface LogEvent {
  readonly timestamp?: number;
  readonly message?: string;
}

/** The events of one log group. */
export interface GroupEvents {
  /** The topology group whose tasks wrote them. */
  readonly group: string;
  readonly events: readonly LogEvent[];
}

export interface CallLogs {
  /** File name (`rpc-<topology>-<group>.ndjson`, as the servers write it) → NDJSON text. */
  readonly files: Readonly<Record<string, string>>;
  readonly records: number;
  /** Events that are not call records (the server's other log lines, or anything unparsable). */
  readonly skipped: number;
}

/** The topology group of a log group named `<prefix><group>/<suffix>` (logGroupPrefix), or undefined. */
export function groupOfLogGroup(logGroupName: string, stagePrefix: string): string | undefined {
  if (!logGroupName.startsWith(stagePrefix)) return undefined;
  const group = logGroupName.slice(stagePrefix.length).split("/")[0];
  return group === undefined || group === "" ? undefined : group;
}

/** A call-log record line: pino JSON with `msg: "rpc"` and the columns the report reads. */
export function parseCallRecord(line: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const r = value as Record<string, unknown>;
  if (r["msg"] !== "rpc") return undefined;
  if (typeof r["src"] !== "string" || typeof r["dst"] !== "string" || typeof r["dstVerb"] !== "string") return undefined;
  if (typeof r["gameId"] !== "string" || typeof r["durationNs"] !== "number") return undefined;
  return r;
}

/**
 * Turns the CloudWatch events of a stage's log groups back into the call-log files the servers
 * wrote (one per group, records in time order, each line as the server wrote it). Events that are
 * not call records are counted and dropped; a record seen twice (the same line at the same time,
 * as overlapping downloads return it) is kept once.
 */
export function callLogsFromEvents(topology: string, groups: readonly GroupEvents[]): CallLogs {
  const byGroup = new Map<string, { time: number; line: string }[]>();
  let skipped = 0;
  let records = 0;
  for (const { group, events } of groups) {
    const lines = byGroup.get(group) ?? [];
    byGroup.set(group, lines);
    const seen = new Set(lines.map((l) => l.line));
    for (const e of events) {
      const line = (e.message ?? "").trim();
      const record = parseCallRecord(line);
      if (record === undefined) {
        skipped++;
        continue;
      }
      if (seen.has(line)) continue;
      seen.add(line);
      const time = typeof record["time"] === "number" ? record["time"] : (e.timestamp ?? 0);
      lines.push({ time, line });
      records++;
    }
  }
  const files: Record<string, string> = {};
  for (const [group, lines] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) {
    if (lines.length === 0) continue;
    lines.sort((a, b) => a.time - b.time);
    files[`rpc-${topology}-${group}.ndjson`] = lines.map((l) => `${l.line}\n`).join("");
  }
  return { files, records, skipped };
}

export interface FilledRun {
  readonly dir: string;
  readonly gameId: string;
  readonly records: number;
}

/**
 * Writes each replay run's `rpc.ndjson` (the call records of its game) from call-log files, and its
 * `rpcRecords` count into summary.json: what `pnpm replay --rpc-logs` does when it can read the
 * servers' logs itself. Runs without a game id are left alone.
 */
export async function fillRunFolders(runsRoot: string, logs: CallLogs): Promise<FilledRun[]> {
  const byGame = new Map<string, string[]>();
  for (const text of Object.values(logs.files)) {
    for (const line of text.split("\n")) {
      const record = line === "" ? undefined : parseCallRecord(line);
      if (record === undefined) continue;
      const id = record["gameId"] as string;
      if (id === "") continue;
      const list = byGame.get(id) ?? [];
      list.push(line);
      byGame.set(id, list);
    }
  }
  const filled: FilledRun[] = [];
  for (const dir of await runFolders(runsRoot)) {
    const summaryPath = join(dir, "summary.json");
    const summary = JSON.parse(await readFile(summaryPath, "utf8")) as Record<string, unknown>;
    const gameId = summary["gameId"];
    if (summary["format"] !== "flaplab-run/1" || typeof gameId !== "string" || gameId === "") continue;
    const lines = byGame.get(gameId) ?? [];
    // Nothing found (a window that misses the run, say): the folder keeps what it has.
    if (lines.length === 0) {
      filled.push({ dir, gameId, records: 0 });
      continue;
    }
    await writeFile(join(dir, "rpc.ndjson"), lines.map((l) => `${l}\n`).join(""));
    // Replaced in one step: the report never reads a half-written summary.
    await writeFile(`${summaryPath}.tmp`, `${JSON.stringify({ ...summary, rpcRecords: lines.length }, null, 2)}\n`);
    await rename(`${summaryPath}.tmp`, summaryPath);
    filled.push({ dir, gameId, records: lines.length });
  }
  return filled;
}

/** Folders below `root` (or `root` itself) holding a replay run's summary.json. */
async function runFolders(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true });
  if (entries.some((e) => e.isFile() && e.name === "summary.json")) return [root];
  const out: string[] = [];
  for (const e of entries.filter((x) => x.isDirectory() && !x.name.startsWith(".") && !x.name.endsWith(".partial")).sort((a, b) => a.name.localeCompare(b.name))) {
    out.push(...(await runFolders(join(root, e.name))));
  }
  return out;
}
