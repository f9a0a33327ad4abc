export {
  DEFAULT_TICK_MS,
  FLAPLAB_TRACE_FORMAT,
  SPACE_KEY_CODE,
  DEFAULT_TRACE_LIMITS,
  TraceError,
  parseInt64,
  seedFromFileName,
  flapTicks,
  replayFlapOffsetsMs,
  replayFlapTicks,
} from "./trace.js";
export type { Trace, TraceFormat, TraceLimits, Size } from "./trace.js";
export { parseFlappyGoCsv, serializeFlappyGoCsv } from "./csv.js";
export type { ParseOptions } from "./csv.js";
export { parseFlapLabTrace, serializeFlapLabTrace } from "./json.js";
export { detectFormat, parseTrace, serializeTrace } from "./parse.js";
