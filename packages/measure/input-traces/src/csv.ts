import {
  DEFAULT_TRACE_LIMITS,
  SPACE_KEY_CODE,
  type Trace,
  TraceError,
  type TraceLimits,
  seedFromFileName,
} from "./trace.js";

export interface ParseOptions {
  /** Used in error messages and, for FlappyGo CSV files, to read the seed from `<seed>.csv`. */
  readonly fileName?: string;
  readonly limits?: Partial<TraceLimits>;
}

const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

export function resolveLimits(limits: Partial<TraceLimits> | undefined): TraceLimits {
  return { ...DEFAULT_TRACE_LIMITS, ...limits };
}

/**
 * FlappyGo's trace CSV: header `code,time` or `code,time,<fudge s>`, then one row
 * `57,<ms>` per Space press; row 1 is the start press. Blank lines and CRLF endings are accepted.
 */
export function parseFlappyGoCsv(text: string, options: ParseOptions = {}): Trace {
  const fileName = options.fileName;
  const limits = resolveLimits(options.limits);
  const fail = (message: string, line?: number): never => {
    throw new TraceError(message, line !== undefined ? { line, fileName } : { fileName });
  };
  if (text.length > limits.maxChars) fail(`file too large: ${text.length} characters (limit ${limits.maxChars})`);
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const headerIndex = lines.findIndex((l) => l.trim() !== "");
  if (headerIndex < 0) fail("empty trace file");

  const header = (lines[headerIndex] as string).split(",").map((f) => f.trim());
  if (header.length < 2 || header.length > 3 || header[0] !== "code" || header[1] !== "time") {
    fail(`header must be "code,time" or "code,time,<fudge seconds>", got "${lines[headerIndex]}"`, headerIndex + 1);
  }
  let fudgeS: number | undefined;
  if (header.length === 3) {
    const f = header[2] as string;
    if (!DECIMAL.test(f)) fail(`fudge (third header field) must be a number of seconds, got "${f}"`, headerIndex + 1);
    fudgeS = Number(f);
  }

  const times: number[] = [];
  for (let i = headerIndex + 1; i < lines.length; i++) {
    const raw = lines[i] as string;
    if (raw.trim() === "") continue;
    const line = i + 1;
    const fields = raw.split(",").map((f) => f.trim());
    if (fields.length !== 2) fail(`expected "code,time", got "${raw}"`, line);
    const [code, time] = fields as [string, string];
    if (!/^[0-9]+$/.test(code)) fail(`key code must be an integer, got "${code}"`, line);
    if (Number(code) !== SPACE_KEY_CODE) fail(`key code must be ${SPACE_KEY_CODE} (Space), got ${code}`, line);
    if (!DECIMAL.test(time)) fail(`time must be a non-negative number of ms, got "${time}"`, line);
    const t = Number(time);
    if (!Number.isFinite(t)) fail(`time out of range: "${time}"`, line);
    const prev = times[times.length - 1];
    if (prev !== undefined && t < prev) fail(`times must not decrease: ${t} after ${prev}`, line);
    if (times.length > 0 && t - (times[0] as number) > limits.maxDurationMs) {
      fail(`trace longer than ${limits.maxDurationMs} ms`, line);
    }
    times.push(t);
    if (times.length > limits.maxInputs) fail(`more than ${limits.maxInputs} key presses`, line);
  }
  if (times.length === 0) fail("no key presses: the first row after the header must be the start press");

  const start = times[0] as number;
  const seed = fileName !== undefined ? seedFromFileName(fileName) : undefined;
  return {
    format: "flappygo-csv",
    ...(seed !== undefined ? { seed } : {}),
    startMs: start,
    flapOffsetsMs: times.slice(1).map((t) => t - start),
    dropLastInput: true,
    ...(fudgeS !== undefined ? { fudgeS } : {}),
  };
}

/**
 * A trace as FlappyGo's CSV. FlappyGo's replay never sends the last row, so when the trace's last
 * flap does count (`dropLastInput` false) a closing row repeating the last press time is added.
 * Recorded ticks, viewport, bird, seed and metadata are not representable and are left out.
 */
export function serializeFlappyGoCsv(trace: Trace): string {
  const rows = [trace.fudgeS !== undefined ? `code,time,${trace.fudgeS}` : "code,time"];
  const times = [trace.startMs, ...trace.flapOffsetsMs.map((o) => trace.startMs + o)];
  if (!trace.dropLastInput) times.push(times[times.length - 1] as number);
  for (const t of times) rows.push(`${SPACE_KEY_CODE},${t}`);
  return `${rows.join("\n")}\n`;
}
