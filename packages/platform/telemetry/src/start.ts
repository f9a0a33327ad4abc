import { context, type DiagLogger, DiagLogLevel, diag, logs, metrics, propagation, trace, type Tracer } from "@opentelemetry/api";
import { serviceNameFor, type TracingEnv, tracingRequested } from "./env.js";
import { readText } from "@flaplab/settings";
import { LOG_LEVEL, OTLP_ENDPOINT, OTLP_PROTOCOL, OTLP_TRACES_ENDPOINT, OTLP_TRACES_PROTOCOL } from "./settings.js";

/** The name FlapLab's spans are created under (the instrumentation scope). */
export const TRACER_NAME = "flaplab";

function diagToLogger(logger: TracingLogger): DiagLogger {
  const warn = (message: string, ...args: unknown[]): void => {
    logger.warn({ event: "otel-sdk", args: args.map((a) => (a instanceof Error ? a.message : String(a))) }, message);
  };
  const ignore = (): void => {};
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}

/** Tracing started in this process. */
export interface Tracing {
  /** Creates the process's spans; hand it to the runtime. */
  readonly tracer: Tracer;
  /** `service.name` of this process's spans. */
  readonly serviceName: string;
  /** Exports the spans still buffered, then stops the SDK. Resolves once, however often called. */
  shutdown(): Promise<void>;
}

/** The logging `startTracing` needs; a pino logger fits. */
export interface TracingLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface StartTracingOptions {
  /** The process group this process serves: the default `service.name` is `flaplab-<group>`. */
  readonly group: string;
  /** Default: `process.env`. The SDK itself reads `process.env` for the exporter's settings. */
  readonly env?: TracingEnv;
  readonly logger?: TracingLogger;
}

/**
 * Starts the OpenTelemetry Node SDK when the standard environment asks for traces
 * (`tracingRequested`), and returns undefined otherwise: then nothing is loaded and nothing is
 * registered. Traces only (no metrics, no logs), no auto-instrumentation; the exporter, its
 * protocol and endpoint, the sampler and the propagators come from the `OTEL_*` variables as the
 * SDK reads them (default: OTLP over HTTP/protobuf, W3C trace context and baggage).
 */
export async function startTracing(options: StartTracingOptions): Promise<Tracing | undefined> {
  const env = options.env ?? process.env;
  if (!tracingRequested(env)) return undefined;
  // The SDK's own complaints (an export that failed, a bad OTEL_* value) go to the process's log,
  // unless OTEL_LOG_LEVEL asks for the SDK's console logger.
  const logger = options.logger;
  if (logger !== undefined && readText(env, LOG_LEVEL) === undefined) {
    diag.setLogger(diagToLogger(logger), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  }
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const serviceName = serviceNameFor(options.group, env);
  const sdk = new NodeSDK({ serviceName, metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  options.logger?.info(
    {
      event: "tracing-started",
      serviceName,
      endpoint: readText(env, OTLP_TRACES_ENDPOINT) ?? readText(env, OTLP_ENDPOINT) ?? "",
      protocol: readText(env, OTLP_TRACES_PROTOCOL) ?? readText(env, OTLP_PROTOCOL) ?? "http/protobuf",
    },
    "OpenTelemetry tracing on",
  );
  let stopped: Promise<void> | undefined;
  return {
    tracer: trace.getTracer(TRACER_NAME),
    serviceName,
    shutdown() {
      stopped ??= sdk
        .shutdown()
        .catch((err: unknown) => {
          options.logger?.warn({ event: "tracing-shutdown-failed", err: err instanceof Error ? err.message : String(err) }, "tracing shutdown failed");
        })
        .finally(() => {
          // Unregistered: the API is back to its no-op state, and tracing may start again.
          trace.disable();
          logs.disable();
          metrics.disable();
          propagation.disable();
          context.disable();
          diag.disable();
        });
      return stopped;
    },
  };
}
