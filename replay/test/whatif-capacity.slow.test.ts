import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWhatifCli } from "../src/whatif/cli.js";
import { parseStudyArgs, runStudy } from "../src/study/study.js";
import { REPO, topologyOnFreePorts } from "./run/free-topology.js";

// `pnpm whatif --check-capacity` end to end, in small: a one-run study of microservices to fit the
// model on, then bot players at three levels with games of three lengths, so that starts are fitted
// under load too.
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("pnpm whatif --check-capacity", () => {
  it("measures every process at each level against the prediction, adds them up and fits the figures under load", async () => {
    const topo = await topologyOnFreePorts("microservices");
    dirs.push(topo.dir);
    const study = join(topo.dir, "study");
    const trace = join(REPO, "replay/traces/6977347407732442987.csv");
    const studied = await runStudy(parseStudyArgs(["--runs", "1", "--deployments", topo.file, "--trace", trace, "--out", study, "--warmup", "0"], REPO, REPO), () => undefined);
    expect(studied).toMatchObject({ ok: 1, failed: 0 });

    const out: string[] = [];
    const err: string[] = [];
    const capacity = join(topo.dir, "capacity");
    const args = ["--check-capacity", "--study", study, "--deployment", topo.file, "--load", "1,2,3", "--game-lengths", "3,6,9", "--seconds", "6", "--out", capacity];
    const code = await runWhatifCli(args, { cwd: REPO, out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(code, [...out, ...err].join("\n")).toBe(0);
    expect(out.some((l) => /^capacity: warming up .*: 2 players for 5 s, not measured$/.test(l))).toBe(true);
    expect(out.some((l) => /^capacity: 3 players on .* \(games of about 9\.0 s, over WebTransport/.test(l))).toBe(true);
    expect(out.some((l) => /^Within ± 15 %, the deployment's total a level: \d\/3 \(median \|error\| [\d.]+ %(, MISS)?\) from the study's single games; \d\/3 \(median/.test(l)), out.join("\n")).toBe(true);

    const file = JSON.parse(await readFile(join(capacity, "capacity-check.json"), "utf8"));
    const components = ["auth", "engine", "initiator", "music", "score", "worldgen"];
    for (const level of [1, 2, 3]) {
      const rows = file.rows.filter((r: { level: number }) => r.level === level);
      expect(rows.map((r: { group: string }) => r.group).sort()).toEqual([...components, "all processes"].sort());
      const total = rows.find((r: { group: string }) => r.group === "all processes");
      const parts = rows.filter((r: { group: string }) => r.group !== "all processes");
      expect(total.measuredCpuS).toBeCloseTo(parts.reduce((s: number, r: { measuredCpuS: number }) => s + r.measuredCpuS, 0), 9);
      for (const r of parts) {
        expect(r.measuredCpuS).toBeGreaterThan(0);
        expect(Number.isFinite(r.predictedCpuS)).toBe(true);
        expect(r.games).toBeGreaterThanOrEqual(level);
      }
    }
    // Games of three lengths: every component's start is fitted on the levels.
    expect(file.loadCpu.map((c: { component: string }) => c.component).sort()).toEqual(components);
    for (const c of file.loadCpu) expect(c).toMatchObject({ startFrom: "load", levels: [1, 2, 3] });
    expect(out.join("\n")).toMatch(/\| engine +\| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| +[\d.]+ \| these levels \| 1, 2, 3 \|/);
  }, 420_000);
});
