/** The environment variables tracing reads (a subset of the OpenTelemetry SDK's). */
export type TracingEnv = Readonly<Record<string, string | undefined>>;

function set(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== "";
}

/**
 * Whether the standard environment asks for traces: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or an
 * `OTEL_TRACES_EXPORTER` other than `none`, and `OTEL_SDK_DISABLED` is not `true`.
 * Nothing set: off.
 */
export function tracingRequested(env: TracingEnv): boolean {
  if (env["OTEL_SDK_DISABLED"]?.trim().toLowerCase() === "true") return false;
  const exporters = env["OTEL_TRACES_EXPORTER"];
  if (set(exporters)) {
    const names = exporters.split(",").map((n) => n.trim().toLowerCase()).filter((n) => n !== "");
    return names.length > 0 && !names.includes("none");
  }
  return set(env["OTEL_EXPORTER_OTLP_ENDPOINT"]) || set(env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]);
}

/** `service.name` of a process group's spans: `OTEL_SERVICE_NAME` when set, else `flaplab-<group>`. */
export function serviceNameFor(group: string, env: TracingEnv): string {
  const named = env["OTEL_SERVICE_NAME"];
  return set(named) ? named.trim() : `flaplab-${group}`;
}
