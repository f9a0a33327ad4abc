export { serviceNameFor, tracingRequested } from "./env.js";
export type { TracingEnv } from "./env.js";
export { startTracing, TRACER_NAME } from "./start.js";
export type { StartTracingOptions, Tracing, TracingLogger } from "./start.js";
export { OTLP_SPAN_KIND, spansOfExport, startOtlpReceiver } from "./otlp-receiver.js";
export type { OtlpReceiver, ReceivedSpan } from "./otlp-receiver.js";
