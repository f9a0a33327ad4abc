/**
 * The per-game latency log: every input sent, frame and sound clip received, and the round trips
 * around a game (auth, start, stream open), on the page clock (`performance.now()`, ms).
 * Exported as CSV in FlappyGo's layout (`type,direction,time`) with extra columns.
 */

import { csvCell } from "@flaplab/report-kit/csv";

export type RowType = "input" | "frame" | "audio" | "summary" | "auth" | "start" | "open" | "reopen" | "close" | "error";
export type RowDirection = "send" | "recv" | "rtt" | "local";
/** A frame row's kind: a tick frame, or an input ack (the engine applied an input between ticks). */
export type FrameKind = "tick" | "ack";

export interface LatencyRow {
  readonly type: RowType;
  readonly direction: RowDirection;
  /** performance.now() ms, 3 decimals. For "rtt" rows: when the call started. */
  readonly time: number;
  /** Input seq (input rows; the clip's input_seq for audio rows). */
  readonly seq?: number;
  /** Engine tick (frame and audio rows). */
  readonly tick?: number;
  /** The last input reflected by the frame (frame rows). */
  readonly reflectedSeq?: number;
  /** Message size on the wire, size prefix included. */
  readonly bytes?: number;
  /** Sound name (audio rows): flap, point, die. */
  readonly sound?: string;
  /** Duration ms (rtt rows). */
  readonly ms?: number;
  /** Free text: which stream, a close reason, an error message. */
  readonly note?: string;
  /** Frame rows: "tick" or "ack" (an input-ack frame). A frame row without it is a tick frame. */
  readonly kind?: FrameKind;
}

/** CSV header: FlappyGo's three columns, then FlapLab's. */
export const CSV_COLUMNS = ["type", "direction", "time", "seq", "tick", "reflected_seq", "bytes", "sound", "ms", "note", "kind"] as const;

/** ms rounded to 3 decimals (µs). */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

export interface LatencySummary {
  /** Tick frames received (input acks not included, as FlappyGo had only tick frames). */
  readonly framesReceived: number;
  /** Input-ack frames received. */
  readonly acksReceived: number;
  /** Mean bytes per tick frame (size prefix included), null without frames. */
  readonly frameBytesMean: number | null;
  /** Share (0…1) of tick frames smaller than 1 KiB, null without frames. */
  readonly framesUnder1kbShare: number | null;
  readonly inputsSent: number;
  /**
   * Median over inputs of (receive time of the first frame of either kind whose reflected_seq ≥
   * the input's seq) − (the input's send time), ms: a flap is measured by its ack. Inputs never
   * reflected are left out.
   */
  readonly inputToEffectMedianMs: number | null;
  readonly inputToEffectCount: number;
  /**
   * FlappyGo's measure: median over inputs of (receive time of the first tick frame received
   * after the input's send time, strictly, like FlappyGo's bisect_right) − send time, ms, whatever
   * that frame reflects.
   */
  readonly inputToNextFrameMedianMs: number | null;
  readonly inputToNextFrameCount: number;
  /** Median over inputs of (receive time of the sound clip with input_seq = seq) − send time, ms. */
  readonly inputToAudioMedianMs: number | null;
  readonly inputToAudioCount: number;
  /** Clips received on the music stream. */
  readonly audioReceived: number;
  /** Duration of the last Register/Login call, ms. */
  readonly authMs: number | null;
  /** Duration of the StartGame call, ms. */
  readonly startMs: number | null;
}

/** The median of `values` (mean of the middle two for an even count), or null when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const isFrame = (r: LatencyRow) => r.type === "frame" && r.direction === "recv";
/** A received tick frame (rows without a kind are tick frames). */
const isTickFrame = (r: LatencyRow) => isFrame(r) && r.kind !== "ack";
const isAck = (r: LatencyRow) => isFrame(r) && r.kind === "ack";

/**
 * Input-to-effect delays, ms, one per input that some frame (tick frame or input ack) reflects
 * (in seq order).
 */
export function inputToEffectDelays(rows: readonly LatencyRow[]): number[] {
  const frames = rows.filter((r) => isFrame(r) && r.reflectedSeq !== undefined).sort((a, b) => a.time - b.time);
  const out: number[] = [];
  for (const input of firstInputs(rows)) {
    const seq = input.seq!;
    const frame = frames.find((f) => f.reflectedSeq! >= seq && f.time >= input.time);
    if (frame) out.push(roundMs(frame.time - input.time));
  }
  return out;
}

/**
 * Input-to-next-frame delays, ms (FlappyGo's measure): for each input, the first tick frame
 * received strictly after its send time, whatever that frame reflects (in seq order).
 */
export function inputToNextFrameDelays(rows: readonly LatencyRow[]): number[] {
  const frames = rows.filter(isTickFrame).sort((a, b) => a.time - b.time);
  const out: number[] = [];
  for (const input of firstInputs(rows)) {
    const frame = frames.find((f) => f.time > input.time);
    if (frame) out.push(roundMs(frame.time - input.time));
  }
  return out;
}

/** Input-to-audio delays, ms, one per input with a sound clip carrying its seq (in seq order). */
export function inputToAudioDelays(rows: readonly LatencyRow[]): number[] {
  const clips = rows
    .filter((r) => r.type === "audio" && r.direction === "recv" && r.seq !== undefined && r.seq > 0)
    .sort((a, b) => a.time - b.time);
  const out: number[] = [];
  for (const input of firstInputs(rows)) {
    const clip = clips.find((c) => c.seq === input.seq);
    if (clip) out.push(roundMs(clip.time - input.time));
  }
  return out;
}

/** The first send row of each input seq, by seq. */
function firstInputs(rows: readonly LatencyRow[]): LatencyRow[] {
  const bySeq = new Map<number, LatencyRow>();
  for (const r of rows) {
    if (r.type === "input" && r.direction === "send" && r.seq !== undefined && !bySeq.has(r.seq)) bySeq.set(r.seq, r);
  }
  return [...bySeq.values()].sort((a, b) => a.seq! - b.seq!);
}

function lastRtt(rows: readonly LatencyRow[], type: RowType): number | null {
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i]!;
    if (r.type === type && r.direction === "rtt" && r.ms !== undefined) return r.ms;
  }
  return null;
}

export function summarize(rows: readonly LatencyRow[]): LatencySummary {
  const frames = rows.filter(isTickFrame);
  const sized = frames.filter((r) => r.bytes !== undefined).map((r) => r.bytes!);
  const effect = inputToEffectDelays(rows);
  const nextFrame = inputToNextFrameDelays(rows);
  const audio = inputToAudioDelays(rows);
  return {
    framesReceived: frames.length,
    acksReceived: rows.filter(isAck).length,
    frameBytesMean: sized.length === 0 ? null : roundMs(sized.reduce((a, b) => a + b, 0) / sized.length),
    framesUnder1kbShare: sized.length === 0 ? null : sized.filter((b) => b < 1024).length / sized.length,
    inputsSent: firstInputs(rows).length,
    inputToEffectMedianMs: median(effect),
    inputToEffectCount: effect.length,
    inputToNextFrameMedianMs: median(nextFrame),
    inputToNextFrameCount: nextFrame.length,
    inputToAudioMedianMs: median(audio),
    inputToAudioCount: audio.length,
    audioReceived: rows.filter((r) => r.type === "audio" && r.direction === "recv").length,
    authMs: lastRtt(rows, "auth"),
    startMs: lastRtt(rows, "start"),
  };
}

const num = (v: number | undefined, fixed?: number): string =>
  v === undefined ? "" : fixed !== undefined ? v.toFixed(fixed) : String(v);

/** The rows as CSV (header + one line per row, in log order, "\n" line ends). */
export function rowsToCsv(rows: readonly LatencyRow[]): string {
  const lines = [CSV_COLUMNS.join(",")];
  for (const r of rows) {
    lines.push(
      [
        r.type,
        r.direction,
        r.time.toFixed(3),
        num(r.seq),
        num(r.tick),
        num(r.reflectedSeq),
        num(r.bytes),
        csvCell(r.sound ?? ""),
        num(r.ms, 3),
        csvCell(r.note ?? ""),
        r.kind ?? "",
      ].join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** One game's log. Rows are kept in the order they were added, which is time order. */
export class LatencyLog {
  private readonly list: LatencyRow[] = [];

  constructor(private readonly now: () => number = () => performance.now()) {}

  get rows(): readonly LatencyRow[] {
    return this.list;
  }

  /** The page clock, ms (3 decimals). */
  time(): number {
    return roundMs(this.now());
  }

  add(row: LatencyRow): LatencyRow {
    const stored = { ...row, time: roundMs(row.time), ...(row.ms !== undefined ? { ms: roundMs(row.ms) } : {}) };
    this.list.push(stored);
    return stored;
  }

  input(seq: number, time = this.time()): LatencyRow {
    return this.add({ type: "input", direction: "send", time, seq });
  }

  /** A tick frame. */
  frame(tick: number, reflectedSeq: number, bytes: number, time = this.time()): LatencyRow {
    return this.add({ type: "frame", direction: "recv", time, tick, reflectedSeq, bytes, kind: "tick" });
  }

  /** An input-ack frame: input `reflectedSeq` applied during `tick`. */
  ack(tick: number, reflectedSeq: number, bytes: number, time = this.time()): LatencyRow {
    return this.add({ type: "frame", direction: "recv", time, tick, reflectedSeq, bytes, kind: "ack" });
  }

  audio(seq: number, tick: number, sound: string, bytes: number, time = this.time()): LatencyRow {
    return this.add({ type: "audio", direction: "recv", time, seq, tick, sound, bytes });
  }

  /** A round trip that started at `start` and took `ms`. */
  rtt(type: "auth" | "start" | "open" | "reopen", start: number, ms: number, note?: string): LatencyRow {
    return this.add({ type, direction: "rtt", time: start, ms, ...(note !== undefined ? { note } : {}) });
  }

  error(note: string, extra: Partial<Omit<LatencyRow, "type" | "direction" | "note">> = {}): LatencyRow {
    return this.add({ time: this.time(), ...extra, type: "error", direction: "local", note });
  }

  csv(): string {
    return rowsToCsv(this.list);
  }

  summary(): LatencySummary {
    return summarize(this.list);
  }
}
