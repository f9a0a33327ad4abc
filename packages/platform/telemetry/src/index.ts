export { serviceNameFor, tracingRequested } from "./env.js";
export type { TracingEnv } from "./env.js";
export { startTracing, TRACER_NAME } from "./start.js";
export type { StartTracingOptions, Tracing, TracingLogger } from "./start.js";
export { DEFAULT_OTLP_MAX_BODY_BYTES, DEFAULT_OTLP_MAX_SPANS, OTLP_SPAN_KIND, spansOfExport, startOtlpReceiver } from "./otlp-receiver.js";
export type { OtlpReceiver, OtlpReceiverOptions, ReceivedSpan } from "./otlp-receiver.js";
