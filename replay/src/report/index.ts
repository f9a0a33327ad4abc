export { generateReport, runReportCli, parseArgs, USAGE } from "./cli.js";
export type { ReportOptions, ReportResult, CliIo, ParsedArgs } from "./cli.js";
export { buildReport, medianRpcRange, rpcLabel } from "./aggregate.js";
export type { Report, Group, RpcRow } from "./aggregate.js";
export { discoverRuns, loadFlapLabRun, parseRpcNdjson, UsageError, RUN_FORMAT } from "./load.js";
export type { RunData, RunStatus, RunSource, RpcSample, Problem, Discovery } from "./load.js";
export { LatencyHistogram, toMicros, STAT_KEYS, STAT_HEADERS } from "@flaplab/report-kit/latency";
export type { Stats } from "@flaplab/report-kit/latency";
export {
  METRICS,
  METRIC_IDS,
  COMPARISON_METRICS,
  flapLabMetrics,
  flappyGoMetrics,
  parseLatencyCsv,
  parseFlappyGoLatencyCsv,
  interArrivals,
  nextAfter,
  bisectRight,
  tickFrameTimes,
} from "./metrics.js";
export type { MetricId, MetricValues, LatencyRow, FlappyGoRow } from "./metrics.js";
export { renderHtml, renderMarkdown, renderMetricsCsv, metricsJson, REPORT_FORMAT, METRICS_CSV_HEADER } from "./render.js";
export { LATENCY_HEADERS, RPC_HEADERS, RUN_HEADERS, FAILURE_HEADERS, COMPARISON_HEADERS, PROBLEM_HEADERS, formatMs } from "./tables.js";
export { parseCsv, CsvError } from "./csv.js";
