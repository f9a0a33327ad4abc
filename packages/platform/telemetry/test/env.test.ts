import { describe, expect, it } from "vitest";
import { serviceNameFor, tracingRequested } from "../src/index.js";

describe("tracingRequested", () => {
  it("is off with no OTEL_* variables", () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toBe(false);
  });
  it("is on with an OTLP endpoint, for all signals or traces alone", () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBe(false);
  });
  it("follows OTEL_TRACES_EXPORTER: on unless it is none", () => {
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: "console" })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: "otlp, none" })).toBe(false);
  });
  it("is off when OTEL_SDK_DISABLED is true, whatever else is set", () => {
    expect(tracingRequested({ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: "TRUE", OTEL_TRACES_EXPORTER: "otlp" })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: "false", OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
  });
});

describe("serviceNameFor", () => {
  it("is flaplab-<group> unless OTEL_SERVICE_NAME names the service", () => {
    expect(serviceNameFor("engine-1", {})).toBe("flaplab-engine-1");
    expect(serviceNameFor("engine-1", { OTEL_SERVICE_NAME: "my-engine" })).toBe("my-engine");
  });
});
