import { describe, expect, it } from "vitest";
import { judge, matches } from "../src/deviations.js";
import { frame, unframe } from "../src/framing.js";
import { failedCases, failureDetail, limitToProtocol, parseCounts } from "../src/suite.js";

async function* chunks(...parts: number[][]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new Uint8Array(p);
}

async function all(stream: AsyncIterable<Uint8Array>): Promise<number[][]> {
  const out: number[][] = [];
  for await (const m of stream) out.push([...m]);
  return out;
}

describe("the runner's framing", () => {
  it("prefixes a message with its length, 32-bit big-endian", () => {
    expect([...frame(new Uint8Array([7, 8, 9]))]).toEqual([0, 0, 0, 3, 7, 8, 9]);
    expect([...frame(new Uint8Array(0))]).toEqual([0, 0, 0, 0]);
  });

  it("reads messages split across chunks and several in one chunk", async () => {
    const stream = chunks([0, 0], [0, 2, 1], [2, 0, 0, 0, 0, 0, 0, 0, 1], [3]);
    expect(await all(unframe(stream))).toEqual([[1, 2], [], [3]]);
  });

  it("refuses input that ends inside a message", async () => {
    await expect(all(unframe(chunks([0, 0, 0, 4, 1, 2])))).rejects.toThrow(/ended inside a message \(6 bytes/);
  });
});

describe("the runner's output", () => {
  const output = [
    "Computed 28 config case permutations.",
    "FAILED: Basic/HTTPVersion:1/Protocol:PROTOCOL_CONNECT/Codec:CODEC_JSON/TLS:false/unary/success:",
    "\treceived an unexpected error:",
    "FAILED: gRPC Unexpected Requests/HTTPVersion:2/TLS:false/unexpected-compression:",
    "",
    "Total cases: 180",
    "178 passed, 2 failed",
  ].join("\n");

  it("gives the counts and the failing cases' names", () => {
    expect(parseCounts(output)).toEqual({ total: 180, passed: 178, failed: 2 });
    expect(failedCases(output)).toEqual([
      "Basic/HTTPVersion:1/Protocol:PROTOCOL_CONNECT/Codec:CODEC_JSON/TLS:false/unary/success",
      "gRPC Unexpected Requests/HTTPVersion:2/TLS:false/unexpected-compression",
    ]);
  });

  it("gives what the runner says about a failing case", () => {
    expect(failureDetail(output, "Basic/HTTPVersion:1/Protocol:PROTOCOL_CONNECT/Codec:CODEC_JSON/TLS:false/unary/success")).toBe("\treceived an unexpected error:");
    expect(failureDetail(output, "gRPC Unexpected Requests/HTTPVersion:2/TLS:false/unexpected-compression")).toBe("");
    expect(failureDetail(output, "Basic/none")).toBe("");
  });

  it("has no counts without the summary (a runner that stopped early)", () => {
    expect(parseCounts("config/server.yaml: config features indicate gRPC protocol is supported but trailers are not")).toBeUndefined();
  });

  it("limits a config to one protocol, and refuses a config without a protocols line", () => {
    expect(limitToProtocol("features:\n  protocols: [PROTOCOL_CONNECT, PROTOCOL_GRPC]\n  codecs: [CODEC_PROTO]\n", "PROTOCOL_GRPC")).toBe(
      "features:\n  protocols: [PROTOCOL_GRPC]\n  codecs: [CODEC_PROTO]\n",
    );
    expect(() => limitToProtocol("features:\n  codecs: [CODEC_PROTO]\n", "PROTOCOL_GRPC")).toThrow(/no protocols/);
  });
});

describe("known deviations", () => {
  const name = "Server Message Size/HTTPVersion:2/Protocol:PROTOCOL_GRPC/TLS:false/unary/request-exceeds-server-limit";

  it("match a name exactly, `*` within one part and `**` across parts", () => {
    expect(matches(name, name)).toBe(true);
    expect(matches("Server Message Size/*/Protocol:PROTOCOL_GRPC/**", name)).toBe(true);
    expect(matches("Server Message Size/*/unary/*", name)).toBe(false);
    expect(matches("Server Message Size/**", name)).toBe(true);
    expect(matches("Server Message Size", name)).toBe(false);
  });

  it("sort a run's failures into unexpected ones, and report listed ones that no longer fail", () => {
    const verdict = judge([name, "Basic/x"], ["Server Message Size/**", "Timeouts/**"]);
    expect(verdict).toEqual({ unexpected: ["Basic/x"], stale: ["Timeouts/**"] });
  });
});
