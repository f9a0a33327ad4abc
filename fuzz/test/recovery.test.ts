// The runner against a monolith that really dies: a case that kills the server process is a crash
// of that case, the server comes back on the same data, and the runs stored before are still there.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTarget, type Target } from "../src/runner.js";
import { FuzzServer } from "../src/server.js";

let server: FuzzServer;

beforeAll(async () => {
  server = await FuzzServer.start();
  await server.recordRuns(3);
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe("a server that dies under a case", () => {
  it("is a crash of that case, saying how the process ended, then a restart on the same data and ports", async () => {
    const killer: Target<number> = {
      name: "killer",
      remote: true,
      arbitrary: fc.integer({ min: 0, max: 9 }),
      async run(n, { server: s }) {
        if (n === 7) process.kill(s.pid!, "SIGKILL");
        const res = await fetch(`${s.baseUrl}/healthz`).catch(() => undefined);
        return res?.status === 200 ? { kind: "accepted", detail: "healthy" } : { kind: "clear", detail: "no answer" };
      },
      show: (n) => `n=${n}`,
    };
    const port = server.port;
    const row = await runTarget(killer, { cases: 60, seed: 3, server, maxFindings: 2 });
    expect(row.crashes).toBeGreaterThan(0);
    expect(row.findings[0]!.kind).toBe("crash");
    expect(row.findings[0]!.detail).toMatch(/server process exited \(SIGKILL/);
    expect(row.findings[0]!.input).toMatch(/^n=7/);
    expect(server.restarts).toBeGreaterThan(0);
    expect(server.port).toBe(port);
    expect(await server.healthy()).toBe(true);
    expect(await server.storedRunsIntact()).toBe(3);
  });
});
