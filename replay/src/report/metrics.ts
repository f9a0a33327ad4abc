import { CsvError, parseCsv } from "./csv.js";

/** The latency metrics of the report, in table order. */
export const METRICS = [
  { id: "frame_inter_arrival", label: "frame inter-arrival", column: "Frame inter-arrival" },
  { id: "input_to_effect", label: "input-to-effect", column: "Input → effect" },
  { id: "input_to_next_frame", label: "input-to-next-frame", column: "Input → next frame" },
  { id: "input_to_audio", label: "input-to-audio", column: "Input → next audio" },
  { id: "auth", label: "auth latency", column: "Auth" },
  { id: "start_game", label: "start-game latency", column: "Start game" },
] as const;

export type MetricId = (typeof METRICS)[number]["id"];
export const METRIC_IDS: readonly MetricId[] = METRICS.map((m) => m.id);

/** Column order of the comparison table (the FlappyGo paper's order first). */
export const COMPARISON_METRICS: readonly MetricId[] = [
  "frame_inter_arrival",
  "input_to_next_frame",
  "input_to_audio",
  "input_to_effect",
  "auth",
  "start_game",
];

export function metricInfo(id: MetricId): (typeof METRICS)[number] {
  return METRICS.find((m) => m.id === id)!;
}

/** Per-run samples (ms) of each metric; null when the data source cannot provide the metric. */
export type MetricValues = Record<MetricId, number[] | null>;

/** One row of FlapLab's latency.csv (only the columns the report uses). */
export interface LatencyRow {
  readonly line: number;
  readonly type: string;
  readonly direction: string;
  readonly time: number;
  readonly seq: number | null;
  readonly tick: number | null;
  readonly reflectedSeq: number | null;
  readonly ms: number | null;
  /** "tick" or "ack" for frame rows; files without the column give "tick". */
  readonly kind: string;
}

export const LATENCY_COLUMNS = ["type", "direction", "time"] as const;

/** Parses a FlapLab latency.csv; throws CsvError naming the line for anything malformed. */
export function parseLatencyCsv(text: string): LatencyRow[] {
  const table = parseCsv(text, LATENCY_COLUMNS);
  const hasKind = table.header.includes("kind");
  return table.rows.map(({ line, cells }) => {
    const type = cells["type"]!.trim();
    const direction = cells["direction"]!.trim();
    const time = num(cells["time"], line, "time");
    if (time === null) throw new CsvError(`line ${line}: time is empty`);
    const ms = num(cells["ms"], line, "ms");
    if (direction === "rtt" && ms === null) throw new CsvError(`line ${line}: ${type} rtt row without ms`);
    const kind = hasKind ? (cells["kind"] ?? "").trim() : "";
    return {
      line,
      type,
      direction,
      time,
      seq: num(cells["seq"], line, "seq"),
      tick: num(cells["tick"], line, "tick"),
      reflectedSeq: num(cells["reflected_seq"], line, "reflected_seq"),
      ms,
      kind: type === "frame" && kind === "" ? "tick" : kind,
    };
  });
}

function num(cell: string | undefined, line: number, column: string): number | null {
  if (cell === undefined || cell.trim() === "") return null;
  const v = Number(cell);
  if (!Number.isFinite(v)) throw new CsvError(`line ${line}: ${column} "${cell}" is not a number`);
  return v;
}

/** µs-rounded ms, so values print as they were logged. */
const round3 = (ms: number): number => Math.round(ms * 1000) / 1000;

/** Differences between consecutive times (sorted ascending first). */
export function interArrivals(times: readonly number[]): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  const out: number[] = [];
  for (let i = 1; i < sorted.length; i++) out.push(round3(sorted[i]! - sorted[i - 1]!));
  return out;
}

/** Index of the first element of sorted `xs` strictly greater than `x` (Python's bisect_right). */
export function bisectRight(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * FlappyGo's "input → next X": for each input send time, the first receive time strictly after it
 * (bisect_right) minus the send time. Inputs with nothing after them are left out.
 */
export function nextAfter(sendTimes: readonly number[], recvTimes: readonly number[]): number[] {
  const sorted = [...recvTimes].sort((a, b) => a - b);
  const out: number[] = [];
  for (const t of sendTimes) {
    const i = bisectRight(sorted, t);
    if (i < sorted.length) out.push(round3(sorted[i]! - t));
  }
  return out;
}

const byTime = <T extends { time: number }>(rows: readonly T[]): T[] => [...rows].sort((a, b) => a.time - b.time);

/** Tick-frame receive times of a FlapLab log, ascending. */
export function tickFrameTimes(rows: readonly LatencyRow[]): number[] {
  return byTime(rows.filter((r) => r.type === "frame" && r.direction === "recv" && r.kind !== "ack")).map((r) => r.time);
}

/** The metrics a press has on its own, by the press's seq: what a duet pairs press by press. */
export type PressMetricId = "input_to_effect" | "input_to_audio";
export const PRESS_METRICS: readonly PressMetricId[] = ["input_to_audio", "input_to_effect"];
export type PressValues = Record<PressMetricId, ReadonlyMap<number, number>>;

/** The first send row of each seq, by time; inputs without seq count only for input-to-next-frame. */
function firstSends(rows: readonly LatencyRow[]): LatencyRow[] {
  const seen = new Set<number>();
  return byTime(rows.filter((r) => r.type === "input" && r.direction === "send")).filter((r) => {
    if (r.seq === null) return true;
    if (seen.has(r.seq)) return false;
    seen.add(r.seq);
    return true;
  });
}

/** Each press's input-to-effect and input-to-audio (ms), by its seq, from a FlapLab latency log. */
export function pressMetrics(rows: readonly LatencyRow[]): PressValues {
  const frames = byTime(rows.filter((r) => r.type === "frame" && r.direction === "recv"));
  const audio = byTime(rows.filter((r) => r.type === "audio" && r.direction === "recv"));
  const effect = new Map<number, number>();
  const toAudio = new Map<number, number>();
  for (const input of firstSends(rows)) {
    if (input.seq === null) continue;
    const seq = input.seq;
    const frame = frames.find((f) => f.reflectedSeq !== null && f.reflectedSeq >= seq && f.time >= input.time);
    if (frame) effect.set(seq, round3(frame.time - input.time));
    const clip = audio.find((a) => a.seq === seq && seq > 0);
    if (clip) toAudio.set(seq, round3(clip.time - input.time));
  }
  return { input_to_effect: effect, input_to_audio: toAudio };
}

/** The metrics of one FlapLab run, computed from its latency log. */
export function flapLabMetrics(rows: readonly LatencyRow[], fallback: { authMs?: number | null; startMs?: number | null } = {}): MetricValues {
  const ticks = tickFrameTimes(rows);
  const inputs = firstSends(rows);
  const presses = pressMetrics(rows);
  const effect = [...presses.input_to_effect.values()];
  const toAudio = [...presses.input_to_audio.values()];

  const rtt = (type: string, fb: number | null | undefined): number[] => {
    const ms = rows.filter((r) => r.type === type && r.direction === "rtt" && r.ms !== null).map((r) => r.ms!);
    return ms.length > 0 ? ms : typeof fb === "number" && Number.isFinite(fb) ? [fb] : [];
  };

  return {
    frame_inter_arrival: interArrivals(ticks),
    input_to_next_frame: nextAfter(
      inputs.map((r) => r.time),
      ticks,
    ),
    input_to_audio: toAudio,
    input_to_effect: effect,
    auth: rtt("auth", fallback.authMs),
    start_game: rtt("start", fallback.startMs),
  };
}

/** One row of FlappyGo's latency_data.csv. */
export interface FlappyGoRow {
  readonly type: string;
  readonly direction: string;
  readonly time: number;
}

export function parseFlappyGoLatencyCsv(text: string): FlappyGoRow[] {
  const table = parseCsv(text, LATENCY_COLUMNS);
  return table.rows.map(({ line, cells }) => {
    const time = num(cells["time"], line, "time");
    if (time === null) throw new CsvError(`line ${line}: time is empty`);
    return { type: cells["type"]!.trim(), direction: cells["direction"]!.trim(), time };
  });
}

/**
 * The metrics of one FlappyGo run with FlappyGo's definitions: input → next frame / next audio by
 * bisect_right over receive times. Input-to-effect needs seqs, which FlappyGo does not log.
 */
export function flappyGoMetrics(rows: readonly FlappyGoRow[], extra: { authMs: number | null; startMs: number | null }): MetricValues {
  const times = (type: string, direction: string): number[] =>
    rows
      .filter((r) => r.type === type && r.direction === direction)
      .map((r) => r.time)
      .sort((a, b) => a - b);
  const inputs = times("input", "send");
  const frames = times("frame", "recv");
  const audio = times("audio", "recv");
  return {
    frame_inter_arrival: interArrivals(frames),
    input_to_next_frame: nextAfter(inputs, frames),
    input_to_audio: nextAfter(inputs, audio),
    input_to_effect: null,
    auth: extra.authMs === null ? [] : [extra.authMs],
    start_game: extra.startMs === null ? [] : [extra.startMs],
  };
}
