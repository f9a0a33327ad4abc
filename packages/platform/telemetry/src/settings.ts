import { text } from "@flaplab/settings";

// The standard OpenTelemetry variables FlapLab's tracing reads or documents; the SDK reads the
// exporter's, the sampler's and the resource's itself (packages/platform/telemetry/README.md lists the rest).

/** OTLP collector base URL; set, it turns tracing on. */
export const OTLP_ENDPOINT = text({
  name: "OTEL_EXPORTER_OTLP_ENDPOINT",
  format: "URL",
  description: "OTLP collector base URL, e.g. `http://127.0.0.1:4318`; set, it turns tracing on",
  defaultText: "unset: tracing off",
  readBy: "tracing (every server process)",
});

/** The traces endpoint alone; set, it turns tracing on. */
export const OTLP_TRACES_ENDPOINT = text({
  name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  format: "URL",
  description: "the traces endpoint alone (a full URL); set, it turns tracing on",
  defaultText: "unset",
  readBy: "tracing",
});

/** The exporters; anything but `none` turns tracing on. */
export const TRACES_EXPORTER = text({
  name: "OTEL_TRACES_EXPORTER",
  format: "comma-separated exporter names",
  description: "anything but `none` (`otlp`, `console`) turns tracing on",
  defaultText: "unset",
  readBy: "tracing",
});

/** `true` keeps tracing off. */
export const SDK_DISABLED = text({
  name: "OTEL_SDK_DISABLED",
  format: "`true` or `false`",
  description: "`true`: tracing stays off whatever else is set",
  defaultText: "unset",
  readBy: "tracing",
});

/** The process's `service.name`. */
export const SERVICE_NAME = text({
  name: "OTEL_SERVICE_NAME",
  format: "text",
  description: "the process's service name",
  defaultText: "`flaplab-<group>`; in the cloud with `FLAPLAB_TRACING=xray`, `flaplab-<stage>-<group>`",
  readBy: "tracing",
});

/** The OTLP exporter's protocol. */
export const OTLP_PROTOCOL = text({
  name: "OTEL_EXPORTER_OTLP_PROTOCOL",
  format: "`http/protobuf`, `http/json` or `grpc`",
  description: "the OTLP exporter's protocol; `grpc` with an endpoint on port 4317",
  defaultText: "`http/protobuf`",
  readBy: "tracing",
});

/** The OTLP traces exporter's protocol alone. */
export const OTLP_TRACES_PROTOCOL = text({
  name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  format: "as `OTEL_EXPORTER_OTLP_PROTOCOL`",
  description: "the protocol of the traces exporter alone",
  defaultText: "`OTEL_EXPORTER_OTLP_PROTOCOL`",
  readBy: "tracing",
});

/** The sampler (read by the SDK). */
export const TRACES_SAMPLER = text({
  name: "OTEL_TRACES_SAMPLER",
  format: "sampler name",
  description: "the sampler, e.g. `parentbased_traceidratio`",
  defaultText: "every trace, parent-based",
  readBy: "tracing",
});

/** The sampler's argument (read by the SDK). */
export const TRACES_SAMPLER_ARG = text({
  name: "OTEL_TRACES_SAMPLER_ARG",
  format: "text",
  description: "the sampler's argument, e.g. `0.1` with `parentbased_traceidratio` to keep one trace in ten",
  defaultText: "unset",
  readBy: "tracing",
});

/** Labels on every span's resource (read by the SDK). */
export const RESOURCE_ATTRIBUTES = text({
  name: "OTEL_RESOURCE_ATTRIBUTES",
  format: "comma-separated `key=value`",
  description: "labels on every span's resource, e.g. `deployment.environment=dev`",
  defaultText: "unset",
  readBy: "tracing",
});

/** The SDK's own log level; set, the SDK logs to the console instead of the process's log. */
export const LOG_LEVEL = text({
  name: "OTEL_LOG_LEVEL",
  format: "`none`, `error`, `warn`, `info`, `debug`, `verbose` or `all`",
  description: "the SDK's own log level; set, the SDK's messages go to the console instead of the process's log",
  defaultText: "unset: the SDK's warnings go to the process's log",
  readBy: "tracing",
});

/** Every variable tracing reads or passes to the SDK. */
export const SETTINGS = [
  OTLP_ENDPOINT,
  OTLP_TRACES_ENDPOINT,
  TRACES_EXPORTER,
  SDK_DISABLED,
  SERVICE_NAME,
  OTLP_PROTOCOL,
  OTLP_TRACES_PROTOCOL,
  TRACES_SAMPLER,
  TRACES_SAMPLER_ARG,
  RESOURCE_ATTRIBUTES,
  LOG_LEVEL,
];
