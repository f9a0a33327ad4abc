import { type ParseOptions, resolveLimits } from "./csv.js";
import { FLAPLAB_TRACE_FORMAT, type Size, type Trace, TraceError, parseInt64 } from "./trace.js";

const ROOT_KEYS = new Set(["format", "seed", "viewport", "bird", "inputs", "dropLastInput", "recordedAt", "source"]);
const INPUT_KEYS = new Set(["t", "tick"]);
const SIZE_KEYS = new Set(["width", "height"]);
const MAX_SIZE = 1 << 16;
const MAX_SOURCE_CHARS = 1000;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * FlapLab's JSON trace (`"format": "flaplab-trace/1"`, see README). Unknown keys are rejected so
 * that typos do not pass silently.
 */
export function parseFlapLabTrace(text: string, options: ParseOptions = {}): Trace {
  const fileName = options.fileName;
  const limits = resolveLimits(options.limits);
  const fail = (message: string, path?: string): never => {
    throw new TraceError(message, path !== undefined ? { path, fileName } : { fileName });
  };
  if (text.length > limits.maxChars) fail(`file too large: ${text.length} characters (limit ${limits.maxChars})`);
  if (text.trim() === "") fail("empty trace file");

  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const pos = /position (\d+)/.exec(message);
    throw new TraceError(`invalid JSON: ${message}`, {
      ...(pos?.[1] !== undefined ? { line: lineAt(text, Number(pos[1])) } : {}),
      ...(fileName !== undefined ? { fileName } : {}),
    });
  }

  const checkKeys = (obj: JsonObject, allowed: Set<string>, path: string): void => {
    for (const k of Object.keys(obj)) if (!allowed.has(k)) fail(`unknown field "${k}"`, path);
  };
  const size = (v: unknown, path: string): Size => {
    if (!isObject(v)) return fail("must be an object {width, height}", path);
    checkKeys(v, SIZE_KEYS, path);
    for (const k of ["width", "height"] as const) {
      const n = v[k];
      if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_SIZE) {
        fail(`must be a whole number of px in 1…${MAX_SIZE}`, `${path}.${k}`);
      }
    }
    return { width: v.width as number, height: v.height as number };
  };

  if (!isObject(doc)) return fail("a FlapLab trace must be a JSON object", "$");
  checkKeys(doc, ROOT_KEYS, "$");
  if (doc.format !== FLAPLAB_TRACE_FORMAT) {
    fail(`format must be "${FLAPLAB_TRACE_FORMAT}", got ${JSON.stringify(doc.format)}`, "$.format");
  }
  if (typeof doc.seed !== "string") return fail("seed must be a decimal int64 in a string", "$.seed");
  const seed = parseInt64(doc.seed);
  if (seed === undefined) fail(`seed must be a decimal int64, got "${doc.seed}"`, "$.seed");

  if (!Array.isArray(doc.inputs)) return fail("inputs must be an array", "$.inputs");
  const inputs: unknown[] = doc.inputs;
  if (inputs.length + 1 > limits.maxInputs) fail(`more than ${limits.maxInputs} key presses`, "$.inputs");
  const offsets: number[] = [];
  const ticks: number[] = [];
  for (const [i, input] of inputs.entries()) {
    const path = `$.inputs[${i}]`;
    if (!isObject(input)) return fail("must be an object {t}", path);
    checkKeys(input, INPUT_KEYS, path);
    const t = input.t;
    if (typeof t !== "number" || !Number.isFinite(t) || t < 0) {
      return fail("t must be a number of ms ≥ 0 since the start press", `${path}.t`);
    }
    if (t > limits.maxDurationMs) fail(`t beyond ${limits.maxDurationMs} ms`, `${path}.t`);
    const prev = offsets[offsets.length - 1];
    if (prev !== undefined && t < prev) fail(`times must not decrease: ${t} after ${prev}`, `${path}.t`);
    offsets.push(t);
    if ("tick" in input) {
      const k = input.tick;
      if (typeof k !== "number" || !Number.isInteger(k) || k < 1) fail("tick must be an integer ≥ 1", `${path}.tick`);
      const prevTick = ticks[ticks.length - 1];
      if (prevTick !== undefined && (k as number) < prevTick) {
        fail(`ticks must not decrease: ${k} after ${prevTick}`, `${path}.tick`);
      }
      if (ticks.length !== i) fail("tick must be given for every input or for none", `${path}.tick`);
      ticks.push(k as number);
    } else if (ticks.length > 0) {
      fail("tick must be given for every input or for none", path);
    }
  }

  if (doc.dropLastInput !== undefined && typeof doc.dropLastInput !== "boolean") {
    fail("dropLastInput must be a boolean", "$.dropLastInput");
  }
  if (doc.recordedAt !== undefined) {
    if (typeof doc.recordedAt !== "string" || !ISO_8601.test(doc.recordedAt) || Number.isNaN(Date.parse(doc.recordedAt))) {
      fail("recordedAt must be an ISO 8601 date-time with a zone, e.g. 2026-11-21T10:20:00Z", "$.recordedAt");
    }
  }
  if (doc.source !== undefined && (typeof doc.source !== "string" || doc.source.length > MAX_SOURCE_CHARS)) {
    fail(`source must be a string of at most ${MAX_SOURCE_CHARS} characters`, "$.source");
  }

  return {
    format: "flaplab-json",
    seed: seed as bigint,
    ...(doc.viewport !== undefined ? { viewport: size(doc.viewport, "$.viewport") } : {}),
    ...(doc.bird !== undefined ? { bird: size(doc.bird, "$.bird") } : {}),
    startMs: 0,
    flapOffsetsMs: offsets,
    ...(ticks.length > 0 ? { recordedTicks: ticks } : {}),
    dropLastInput: doc.dropLastInput === true,
    ...(typeof doc.recordedAt === "string" ? { recordedAt: doc.recordedAt } : {}),
    ...(typeof doc.source === "string" ? { source: doc.source } : {}),
  };
}

/**
 * A trace as FlapLab JSON, one input per line. Needs a seed. The start time and FlappyGo's fudge
 * are not part of the format and are left out; `dropLastInput` is kept.
 */
export function serializeFlapLabTrace(trace: Trace): string {
  if (trace.seed === undefined) throw new TraceError("a FlapLab trace needs a seed");
  const ticks = trace.recordedTicks;
  if (ticks !== undefined && ticks.length !== trace.flapOffsetsMs.length) {
    throw new TraceError(`recordedTicks has ${ticks.length} entries for ${trace.flapOffsetsMs.length} inputs`);
  }
  const head: JsonObject = { format: FLAPLAB_TRACE_FORMAT, seed: trace.seed.toString() };
  if (trace.viewport) head.viewport = { width: trace.viewport.width, height: trace.viewport.height };
  if (trace.bird) head.bird = { width: trace.bird.width, height: trace.bird.height };
  if (trace.dropLastInput) head.dropLastInput = true;
  if (trace.recordedAt !== undefined) head.recordedAt = trace.recordedAt;
  if (trace.source !== undefined) head.source = trace.source;
  const fields = Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const inputs = trace.flapOffsetsMs.map((t, i) =>
    JSON.stringify(ticks !== undefined ? { t, tick: ticks[i] } : { t }),
  );
  const list = inputs.length === 0 ? "[]" : `[\n    ${inputs.join(",\n    ")}\n  ]`;
  return `{\n${[...fields, `  "inputs": ${list}`].join(",\n")}\n}\n`;
}
