import { type ParseOptions, parseFlappyGoCsv, serializeFlappyGoCsv } from "./csv.js";
import { parseFlapLabTrace, serializeFlapLabTrace } from "./json.js";
import type { Trace, TraceFormat } from "./trace.js";

/** Which format a text is in: FlapLab JSON when it starts with `{` or `[`, else FlappyGo CSV. */
export function detectFormat(text: string): TraceFormat {
  return /^[{[]/.test(text.replace(/^\uFEFF/, "").trimStart()) ? "flaplab-json" : "flappygo-csv";
}

/** Parses either format (see `detectFormat`). Throws a `TraceError` for a broken file. */
export function parseTrace(text: string, options: ParseOptions = {}): Trace {
  return detectFormat(text) === "flaplab-json" ? parseFlapLabTrace(text, options) : parseFlappyGoCsv(text, options);
}

export function serializeTrace(trace: Trace, format: TraceFormat = trace.format): string {
  return format === "flaplab-json" ? serializeFlapLabTrace(trace) : serializeFlappyGoCsv(trace);
}
