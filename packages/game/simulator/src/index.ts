export { simulate, simulateCourse, simulateTrace, formatResult } from "./simulate.js";
export type { GameOutcome, SimulationResult, SimulateOptions } from "./simulate.js";
export { runCli, USAGE } from "./cli.js";
export type { CliIo } from "./cli.js";
export {
  planGame,
  PlanError,
  checkPlan,
  jitterSurvival,
  planTrace,
  traceFromPlan,
  DEFAULT_TARGET_SCORE,
  DEFAULT_ROBUST_TICKS,
} from "./autopilot.js";
export type {
  PlanOptions,
  GamePlan,
  PlanCheck,
  ShiftOutcome,
  TraceOptions,
  JitterOptions,
  JitterResult,
} from "./autopilot.js";
export { runAutopilotCli, AUTOPILOT_USAGE } from "./autopilot-cli.js";
