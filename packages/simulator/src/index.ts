export { simulate, simulateCourse, simulateTrace, formatResult } from "./simulate.js";
export type { GameOutcome, SimulationResult, SimulateOptions } from "./simulate.js";
export { runCli, USAGE } from "./cli.js";
export type { CliIo } from "./cli.js";
