import { SpanKind } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OTLP_SPAN_KIND, type OtlpReceiver, startOtlpReceiver, startTracing } from "../src/index.js";

let receiver: OtlpReceiver;
const saved = { ...process.env };

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  process.env = saved;
  await receiver.close();
});

describe("startTracing", () => {
  it("starts nothing when the environment does not ask for traces", async () => {
    expect(await startTracing({ group: "engine", env: {} })).toBeUndefined();
    expect(await startTracing({ group: "engine", env: { OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } })).toBeUndefined();
  });

  it("exports spans over OTLP/HTTP JSON as flaplab-<group>, flushed by shutdown", async () => {
    // The SDK reads its exporter's settings from process.env.
    process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint;
    process.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/json";
    delete process.env["OTEL_SERVICE_NAME"];
    const tracing = await startTracing({ group: "worldgen" });
    expect(tracing).toBeDefined();
    expect(tracing!.serviceName).toBe("flaplab-worldgen");
    const span = tracing!.tracer.startSpan("flaplab.test.v1.Test/Run", { kind: SpanKind.SERVER, attributes: { "rpc.method": "Run" } });
    span.end();
    await tracing!.shutdown();
    await tracing!.shutdown();
    const got = receiver.spans.filter((s) => s.name === "flaplab.test.v1.Test/Run");
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      serviceName: "flaplab-worldgen",
      kind: OTLP_SPAN_KIND.server,
      parentSpanId: "",
      attributes: { "rpc.method": "Run" },
    });
    expect(got[0]!.traceId).toMatch(/^[0-9a-f]{32}$/);
    // The first test to load the OpenTelemetry SDK (hundreds of modules): on two busy cores, with
    // the other suites loading beside it, that alone has taken more than vitest's 5 s.
  }, 30_000);
});

describe("the SDK's diagnostics", () => {
  it("go to the process's logger when an export fails", async () => {
    const lines: Array<{ obj: object; msg?: string }> = [];
    const logger = { info: () => {}, warn: (obj: object, msg?: string) => lines.push({ obj, msg }) };
    // Nothing listens on port 9 of loopback: the export is refused.
    process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9";
    process.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/json";
    process.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "300";
    process.env["OTEL_BSP_SCHEDULE_DELAY"] = "50";
    const tracing = await startTracing({ group: "music", logger });
    tracing!.tracer.startSpan("lost").end();
    // The batch is exported within 50 ms; its failure is reported when the retries give up.
    for (let i = 0; i < 60 && !lines.some((l) => (l.obj as { event?: string }).event === "otel-sdk"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await tracing!.shutdown();
    const sdk = lines.filter((l) => (l.obj as { event?: string }).event === "otel-sdk");
    expect(sdk.length).toBeGreaterThan(0);
    expect(JSON.stringify(sdk)).toMatch(/ECONNREFUSED|export/i);
    expect(JSON.stringify(sdk)).not.toMatch(/duplicate registration/i);
  }, 10_000);
});
