// Attack: ask Register whether names exist. Before, "already taken" was answered before the
// registration limit was counted: 60 probes in about 110 ms, none throttled, so the accounts of a
// server could be listed at will. Now a Register call is counted against the address's
// registrations (30 per 10 minutes) before the name is looked up: past the limit, probes get
// resource_exhausted with retry-after like registrations do. The probes are sent with curl.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMonolith, type Monolith } from "./credentials-harness.js";

const run = promisify(execFile);
const PROBES = 60;

let m: Monolith;

beforeAll(async () => {
  m = await startMonolith();
  await m.register("existing");
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

/** One Register call with curl from 127.0.0.9: its HTTP status, retry-after and Connect error code. */
async function probe(username: string): Promise<{ status: number; code: string; retryAfter: string | undefined }> {
  const { stdout } = await run("curl", [
    "-sS", "-i", "--interface", "127.0.0.9", "-m", "10",
    "-H", "content-type: application/json",
    "-d", JSON.stringify({ username, password: "a long enough password" }),
    `${m.baseUrl}/flaplab.auth.v1.AuthService/Register`,
  ]);
  const [head = "", body = ""] = stdout.split("\r\n\r\n");
  const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0);
  const retryAfter = /^retry-after: *(\d+)/im.exec(head)?.[1];
  const code = (JSON.parse(body || "{}") as { code?: string }).code ?? "ok";
  return { status, code, retryAfter };
}

describe("probing Register for existing names", () => {
  it("is throttled like registering: past the address's registrations, resource_exhausted with retry-after", async () => {
    const t0 = performance.now();
    const results: Awaited<ReturnType<typeof probe>>[] = [];
    // Ten at a time, as a scripted client would.
    for (let i = 0; i < PROBES; i += 10) results.push(...(await Promise.all(Array.from({ length: 10 }, () => probe("existing")))));
    const ms = performance.now() - t0;
    const counts: Record<string, number> = {};
    for (const r of results) counts[r.code] = (counts[r.code] ?? 0) + 1;
    console.log(`${PROBES} Register probes of a taken name with curl in ${ms.toFixed(0)} ms: ${JSON.stringify(counts)}`);
    expect(counts["already_exists"]).toBeLessThanOrEqual(30);
    const throttled = results.filter((r) => r.code === "resource_exhausted");
    expect(throttled.length).toBeGreaterThanOrEqual(PROBES - 30);
    for (const r of throttled) {
      expect(r.status).toBe(429);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Another address registers as before.
    expect(await m.register("newcomer")).toMatch(/^eyJ/);
  }, 60_000);
});
