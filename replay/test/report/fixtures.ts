import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const LATENCY_HEADER = "type,direction,time,seq,tick,reflected_seq,bytes,sound,ms,note,kind";

export interface Row {
  type: "input" | "frame" | "audio" | "auth" | "start" | "open" | "summary" | "error";
  direction: "send" | "recv" | "rtt";
  time: number;
  seq?: number;
  tick?: number;
  reflectedSeq?: number;
  bytes?: number;
  sound?: string;
  ms?: number;
  note?: string;
  kind?: "tick" | "ack";
}

export function latencyCsv(rows: readonly Row[]): string {
  const cell = (v: number | string | undefined): string => (v === undefined ? "" : String(v));
  const sorted = [...rows].sort((a, b) => a.time - b.time);
  const lines = sorted.map((r) =>
    [r.type, r.direction, r.time.toFixed(3), cell(r.seq), cell(r.tick), cell(r.reflectedSeq), cell(r.bytes), cell(r.sound), r.ms === undefined ? "" : r.ms.toFixed(3), cell(r.note), cell(r.kind)].join(","),
  );
  return `${[LATENCY_HEADER, ...lines].join("\n")}\n`;
}

export interface RpcLine {
  src: string;
  dst: string;
  dstVerb: string;
  durationNs: number;
  /** "client" unless given: "server" for a callee's record. */
  side?: "client" | "server";
}

export interface RunSpec {
  deployment: string;
  seed: string;
  run: number;
  rows: readonly Row[];
  status?: "ok" | "failed";
  failure?: { reason: string; stage: string } | null;
  score?: number;
  expected?: { score: number; ticks: number };
  ticks?: number;
  rpc?: readonly RpcLine[];
  /** Replaces summary.json's text (to break it). */
  summaryText?: string;
  /** The run's serverCpu (absent: none recorded). */
  serverCpu?: unknown;
  /** The run's duet (absent: not a duet run). */
  duet?: unknown;
}

const made: string[] = [];

export async function tempDir(prefix = "flaplab-report-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder tempDir made (call from afterAll). */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** Writes <root>/<deployment>/<seed>/run-NNN/{summary.json, latency.csv, rpc.ndjson}; returns the folder. */
export async function writeRun(root: string, spec: RunSpec): Promise<string> {
  const dir = join(root, spec.deployment, spec.seed, `run-${String(spec.run).padStart(3, "0")}`);
  await mkdir(dir, { recursive: true });
  const gameId = `game-${spec.deployment}-${spec.seed}-${spec.run}`;
  const summary = {
    format: "flaplab-run/1",
    status: spec.status ?? "ok",
    failure: spec.failure ?? null,
    attempt: 1,
    retries: 0,
    deployment: { name: spec.deployment, webUrl: "http://127.0.0.1:5173/", topology: spec.deployment },
    seed: spec.seed,
    trace: `replay/traces/${spec.seed}.csv`,
    gameId,
    score: spec.score ?? 7,
    ticks: spec.ticks ?? 402,
    expected: spec.expected ?? { score: 7, ticks: 402 },
    latency: { authMs: 12.5, startMs: 4.25 },
    dispatch: { presses: 3, latenessMs: { p50: 0.4, p99: 2.1, max: 3 }, samples: [] },
    browser: { name: "chromium", version: "156", executable: "/usr/bin/chromium" },
    startedAt: "2026-11-21T10:00:00.000Z",
    durationMs: 15000,
    ...(spec.serverCpu === undefined ? {} : { serverCpu: spec.serverCpu }),
    ...(spec.duet === undefined ? {} : { duet: spec.duet }),
  };
  await writeFile(join(dir, "summary.json"), spec.summaryText ?? JSON.stringify(summary, null, 2));
  await writeFile(join(dir, "latency.csv"), latencyCsv(spec.rows));
  const rpc = (spec.rpc ?? []).map((r) =>
    JSON.stringify({ level: 30, time: 1, msg: "rpc", side: "client", ...r, srcVerb: "-", gameId, mode: "networked", protocol: "connect+proto", httpVersion: "1.1", code: "ok" }),
  );
  await writeFile(join(dir, "rpc.ndjson"), rpc.map((l) => `${l}\n`).join(""));
  return dir;
}

/** Tick frames whose consecutive receive times differ by the given gaps (ms), from `start`. */
export function tickFrames(start: number, gaps: readonly number[], reflectedSeq = 0): Row[] {
  const rows: Row[] = [{ type: "frame", direction: "recv", time: start, tick: 0, reflectedSeq, bytes: 200, kind: "tick" }];
  let t = start;
  gaps.forEach((g, i) => {
    t += g;
    rows.push({ type: "frame", direction: "recv", time: t, tick: i + 1, reflectedSeq, bytes: 200, kind: "tick" });
  });
  return rows;
}

export const rttRows = (authMs = 12.5, startMs = 4.25): Row[] => [
  { type: "auth", direction: "rtt", time: 10, ms: authMs, note: "login" },
  { type: "start", direction: "rtt", time: 30, ms: startMs, note: "game" },
];

/** Nearest-rank percentile of raw samples: the ⌈p/100·n⌉-th smallest (what HdrHistogram approximates). */
export function nearestRank(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** HdrHistogram with 3 significant digits keeps values within 1/1000 (relative). */
export function expectClose(actual: number | null, expected: number): void {
  if (actual === null) throw new Error(`expected ${expected}, got null`);
  const tolerance = Math.max(0.001, expected * 0.001);
  if (Math.abs(actual - expected) > tolerance) throw new Error(`expected ${expected} ± ${tolerance}, got ${actual}`);
}
