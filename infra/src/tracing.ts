// Traces in the cloud: an AWS Distro for OpenTelemetry (ADOT) collector beside each server
// container, receiving the server's OTLP spans on the task's loopback and sending them to X-Ray.

/** The ADOT collector image, pinned (AWS's public ECR). */
export const ADOT_COLLECTOR_IMAGE = "public.ecr.aws/aws-observability/aws-otel-collector:v0.50.0";
/** Name of the collector's container in each task definition. */
export const COLLECTOR_CONTAINER = "otel-collector";
/** OTLP over HTTP: the standard port, on the task's loopback (containers of a Fargate task share it). */
export const OTLP_HTTP_PORT = 4318;

/** Where a stage's traces go: nowhere (the default) or AWS X-Ray through the collector. */
export type TracingBackend = "off" | "xray";

/** FLAPLAB_TRACING, as `sst deploy` reads it: unset, "off" or "xray". */
export function parseTracing(value: string | undefined): TracingBackend {
  if (value === undefined || value === "" || value === "off") return "off";
  if (value === "xray") return "xray";
  throw new Error(`FLAPLAB_TRACING must be "xray" or "off", got "${value}"`);
}

/** What a service's task gets when its stage is traced. */
export interface CollectorPlan {
  /** The sidecar's container definition (ECS task definition JSON). */
  readonly container: CollectorContainer;
  /** Environment of the server container: the standard OTEL_* variables that turn its tracing on. */
  readonly serverEnvironment: Readonly<Record<string, string>>;
  /** What the task role must allow: the collector writes segments and reads sampling rules. */
  readonly permissions: ReadonlyArray<{ readonly actions: readonly string[]; readonly resources: readonly string[] }>;
}

export interface CollectorContainer {
  readonly name: typeof COLLECTOR_CONTAINER;
  readonly image: string;
  readonly essential: false;
  /** Of the task's whole size: the collector's share, the server keeps the rest. */
  readonly cpu: number;
  readonly memoryReservation: number;
  readonly environment: ReadonlyArray<{ readonly name: string; readonly value: string }>;
}

/**
 * The collector's configuration (`AOT_CONFIG_CONTENT`): OTLP/HTTP on the task's loopback only,
 * batches of spans to X-Ray in the task's region. X-Ray takes W3C trace ids as the SDK makes
 * them (the exporter no longer requires a timestamp in the id).
 */
export function collectorConfig(region: string): string {
  return [
    "receivers:",
    "  otlp:",
    "    protocols:",
    "      http:",
    `        endpoint: 127.0.0.1:${OTLP_HTTP_PORT}`,
    "processors:",
    "  batch/traces:",
    "    timeout: 1s",
    "    send_batch_size: 50",
    "exporters:",
    "  awsxray:",
    `    region: ${region}`,
    "service:",
    "  pipelines:",
    "    traces:",
    "      receivers: [otlp]",
    "      processors: [batch/traces]",
    "      exporters: [awsxray]",
    "",
  ].join("\n");
}

/** The collector beside the server of group `group` in `region` (service name `flaplab-<stage>-<group>`). */
export function collectorPlan(stage: string, group: string, region: string): CollectorPlan {
  return {
    container: {
      name: COLLECTOR_CONTAINER,
      image: ADOT_COLLECTOR_IMAGE,
      // Traces are a side channel: a collector that stops must not stop the game server.
      essential: false,
      cpu: 64,
      memoryReservation: 64,
      environment: [{ name: "AOT_CONFIG_CONTENT", value: collectorConfig(region) }],
    },
    serverEnvironment: {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${OTLP_HTTP_PORT}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_SERVICE_NAME: `flaplab-${stage}-${group}`,
    },
    permissions: [
      {
        actions: ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"],
        resources: ["*"],
      },
    ],
  };
}
