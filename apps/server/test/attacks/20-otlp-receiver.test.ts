// Attack: the OTLP receiver the tracing tests start (loopback only) is sent a gzip body that
// inflates far beyond its 16 MiB body limit, and more spans than any test needs. Before, the limit
// applied to the compressed bytes only (a 64 KiB body inflated to 64 MiB in memory) and every span
// was kept. Now the body is inflated only up to the limit (413 beyond), and at most 20,000 spans
// are kept; the rest are counted.
import { gzipSync } from "node:zlib";
import { DEFAULT_OTLP_MAX_SPANS, type OtlpReceiver, startOtlpReceiver } from "@flaplab/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

const post = (body: Buffer, gzip: boolean) =>
  fetch(`${receiver.endpoint}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(gzip ? { "content-encoding": "gzip" } : {}) },
    body,
  });

/** One export of `n` spans of one trace. */
function exportOf(n: number, from: number): Buffer {
  const spans = Array.from({ length: n }, (_, i) => ({ traceId: "t".repeat(32), spanId: String(from + i).padStart(16, "0"), name: "s", kind: 2 }));
  return Buffer.from(JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans }] }] }));
}

describe("the OTLP receiver of the tests", () => {
  it("inflates a gzip body only up to its limit: a 64 MiB bomb is answered 413", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const res = await post(bomb, true);
    const text = await res.text();
    console.log(`gzip body of ${(bomb.byteLength / 1024).toFixed(0)} KiB inflating to 64 MiB: ${res.status} ${text}`);
    expect(res.status).toBe(413);
    expect(text).toMatch(/decompressed body over 16777216 bytes/);
  });

  it("keeps at most 20,000 spans and counts the rest", async () => {
    for (let i = 0; i < 3; i++) expect((await post(exportOf(10_000, i * 10_000), false)).status).toBe(200);
    console.log(`30,000 spans sent: ${receiver.spans.length} kept, ${receiver.dropped} dropped`);
    expect(receiver.spans.length).toBe(DEFAULT_OTLP_MAX_SPANS);
    expect(receiver.dropped).toBe(30_000 - DEFAULT_OTLP_MAX_SPANS);
  });
});
