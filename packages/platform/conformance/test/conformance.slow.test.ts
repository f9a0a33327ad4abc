// Connect's conformance suite (connectrpc.com/conformance v1.0.7, `pnpm setup:conformance`) against
// the host as a server and the runtime's clients, one protocol at a time. Fails on any failing case
// that config/known-deviations-<side>.txt does not list, and on a listed deviation that no longer
// fails (the list is kept exact).
import { describe, expect, it } from "vitest";
import { judge, knownDeviations } from "../src/deviations.js";
import { PROTOCOLS, runSuite, type Side, type SuiteResult } from "../src/suite.js";

const SIDES: readonly Side[] = ["server", "client"];

describe.each(SIDES)("conformance suite, %s under test", (side) => {
  it("passes every case but the known deviations, in Connect, gRPC and gRPC-Web", { timeout: 900_000 }, async () => {
    const results: SuiteResult[] = [];
    for (const protocol of PROTOCOLS) results.push(await runSuite(side, protocol, { timeoutMs: 300_000 }));
    for (const r of results) console.log(`${side} ${r.protocol}: ${r.total} cases, ${r.passed} passed, ${r.failed} failed`);
    // Every protocol ran cases (a config the runner reads as "nothing to test" would pass vacuously).
    for (const r of results) expect(r.total, `${r.protocol} cases`).toBeGreaterThan(0);
    for (const r of results) expect(r.passed + r.failed, `${r.protocol}: passed + failed`).toBe(r.total);
    const verdict = judge(results.flatMap((r) => r.failures), await knownDeviations(side));
    // The runner's own account of each failure (expected and actual), for the report.
    for (const r of results) if (r.failed > 0) console.log(r.output);
    expect(verdict.unexpected, "failing cases that are not known deviations").toEqual([]);
    expect(verdict.stale, "known deviations that pass now").toEqual([]);
  });
});
