import { readText } from "@flaplab/settings";
import { OTLP_ENDPOINT, OTLP_TRACES_ENDPOINT, SDK_DISABLED, SERVICE_NAME, TRACES_EXPORTER } from "./settings.js";

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
  if (readText(env, SDK_DISABLED)?.trim().toLowerCase() === "true") return false;
  const exporters = readText(env, TRACES_EXPORTER);
  if (set(exporters)) {
    const names = exporters.split(",").map((n) => n.trim().toLowerCase()).filter((n) => n !== "");
    return names.length > 0 && !names.includes("none");
  }
  return set(readText(env, OTLP_ENDPOINT)) || set(readText(env, OTLP_TRACES_ENDPOINT));
}

/** `service.name` of a process group's spans: `OTEL_SERVICE_NAME` when set, else `flaplab-<group>`. */
export function serviceNameFor(group: string, env: TracingEnv): string {
  const named = readText(env, SERVICE_NAME);
  return set(named) ? named.trim() : `flaplab-${group}`;
}
