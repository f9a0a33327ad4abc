/** Tick period of FlappyGo's engine, ms. */
export const DEFAULT_TICK_MS = 33;

/** The `format` value of FlapLab's JSON traces. */
export const FLAPLAB_TRACE_FORMAT = "flaplab-trace/1";

/** Key code of Space in FlappyGo's CSV traces (libinput KEY_SPACE). */
export const SPACE_KEY_CODE = 57;

export type TraceFormat = "flappygo-csv" | "flaplab-json";

export interface Size {
  readonly width: number;
  readonly height: number;
}

/** One recorded game's key presses, whichever format it came from. */
export interface Trace {
  readonly format: TraceFormat;
  /** The world seed (Go int64): from a FlapLab trace, or from a FlappyGo file name `<seed>.csv`. */
  readonly seed?: bigint;
  readonly viewport?: Size;
  readonly bird?: Size;
  /** Time of the start press on the recorder's clock, ms (0 for FlapLab traces). */
  readonly startMs: number;
  /** Every recorded flap press after the start press: `t_i - t_0` in ms, non-decreasing. */
  readonly flapOffsetsMs: readonly number[];
  /** For FlapLab traces that carry them: the engine tick each flap was applied before. */
  readonly recordedTicks?: readonly number[];
  /**
   * True when a replay does not send the last recorded press. FlappyGo's replay script never sent
   * it, and the recorded scores depend on that, so FlappyGo CSV traces set this.
   */
  readonly dropLastInput: boolean;
  /** FlappyGo's per-press replay correction, seconds (third header field of its CSV). */
  readonly fudgeS?: number;
  /** When the game was recorded (ISO 8601). */
  readonly recordedAt?: string;
  /** Free text: what recorded the trace. */
  readonly source?: string;
}

/** A broken trace file. `line` (1-based) for CSV and JSON syntax errors, `path` for JSON schema errors. */
export class TraceError extends Error {
  readonly line: number | undefined;
  readonly path: string | undefined;
  readonly fileName: string | undefined;

  constructor(message: string, where: { line?: number; path?: string; fileName?: string } = {}) {
    const place = [
      where.fileName,
      where.line !== undefined ? `line ${where.line}` : undefined,
      where.path,
    ].filter((p) => p !== undefined);
    super(place.length > 0 ? `${place.join(": ")}: ${message}` : message);
    this.name = "TraceError";
    this.line = where.line;
    this.path = where.path;
    this.fileName = where.fileName;
  }
}

/** Bounds beyond which a file is rejected as absurd. */
export interface TraceLimits {
  /** Characters of text. */
  readonly maxChars: number;
  /** Key presses, the start press included. */
  readonly maxInputs: number;
  /** From the start press to the last press, ms. */
  readonly maxDurationMs: number;
}

export const DEFAULT_TRACE_LIMITS: TraceLimits = Object.freeze({
  maxChars: 16 * 1024 * 1024,
  maxInputs: 100_000,
  maxDurationMs: 24 * 60 * 60 * 1000,
});

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A Go int64 written in decimal, or undefined. */
export function parseInt64(text: string): bigint | undefined {
  if (!/^-?(0|[1-9][0-9]{0,18})$/.test(text)) return undefined;
  const v = BigInt(text);
  return v >= INT64_MIN && v <= INT64_MAX ? v : undefined;
}

/** The seed in a FlappyGo trace file name (`…/6977347407732442987.csv`), or undefined. */
export function seedFromFileName(fileName: string): bigint | undefined {
  const base = fileName.split(/[\\/]/).pop() ?? "";
  const m = /^(-?[0-9]+)\.(csv|json)$/i.exec(base);
  return m?.[1] !== undefined ? parseInt64(m[1]) : undefined;
}

/**
 * The tick before which each flap is applied when a trace is replayed by tick index:
 * `floor(offset / tickMs) + 1`. Ticks of flaps in the same period repeat; the engine
 * counts them as one flap.
 */
export function flapTicks(offsetsMs: readonly number[], tickMs: number = DEFAULT_TICK_MS): number[] {
  if (!(tickMs > 0) || !Number.isFinite(tickMs)) throw new RangeError(`tick period must be positive, got ${tickMs}`);
  return offsetsMs.map((o) => {
    if (!(o >= 0) || !Number.isFinite(o)) throw new RangeError(`flap offset must be a finite number ≥ 0, got ${o}`);
    return Math.floor(o / tickMs) + 1;
  });
}

/** The flap offsets a replay sends: all of them, or all but the last when `dropLastInput`. */
export function replayFlapOffsetsMs(trace: Trace): number[] {
  const offsets = [...trace.flapOffsetsMs];
  if (trace.dropLastInput) offsets.pop();
  return offsets;
}

/**
 * The flap ticks of a replay by tick index: the recorded ticks when the trace has them, else
 * `flapTicks` of `replayFlapOffsetsMs`. For the easy FlappyGo trace this is
 * [42,53,67,85,103,128,140,204,232,266,275,292,322,349].
 */
export function replayFlapTicks(trace: Trace, tickMs: number = DEFAULT_TICK_MS): number[] {
  if (trace.recordedTicks !== undefined) {
    const ticks = [...trace.recordedTicks];
    if (trace.dropLastInput) ticks.pop();
    return ticks;
  }
  return flapTicks(replayFlapOffsetsMs(trace), tickMs);
}
