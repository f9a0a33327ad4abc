import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bisectRight, generateReport, nextAfter } from "../../src/report/index.js";
import { expectClose, removeTempDirs, tempDir } from "./fixtures.js";
import { FG_SEED, writeFlappyGoData } from "./flappygo-fixture.js";

afterAll(removeTempDirs);

describe("FlappyGo data", () => {
  it("bisect_right finds the first time strictly after", () => {
    expect(bisectRight([1, 2, 2, 3], 2)).toBe(3);
    expect(bisectRight([1, 2, 3], 0)).toBe(0);
    expect(bisectRight([1, 2, 3], 3)).toBe(3);
    expect(nextAfter([0, 2, 3], [1, 2, 2.5])).toEqual([1, 0.5]);
  });

  it("reads a FlappyGo data folder with FlappyGo's definitions and per-RPC stats", async () => {
    const root = await tempDir();
    const out = await tempDir();
    const data = await writeFlappyGoData(root);
    const { report } = await generateReport({ inputs: [], flappyGo: [data], outDir: out });
    expect(report.groups).toHaveLength(1);
    const g = report.groups[0]!;
    expect(g.deployment).toBe("flappygo:monolith_single_instance");
    expect(g.seed).toBe(FG_SEED);
    expect(g.runs.map((r) => [r.id, r.status, r.score, r.gameId])).toEqual([
      [`client_seed_${FG_SEED}_run_1`, "ok", 7, "g-1"],
      [`client_seed_${FG_SEED}_run_2`, "ok", 7, "g-2"],
    ]);
    const run = g.runs[0]!;
    // Input at 133.000 coincides with a frame: the next frame is the one after it (166).
    expect(run.values!.input_to_next_frame).toEqual([0.5, 33, 15.5]);
    expect(run.values!.input_to_audio).toEqual([20, 27, 9.5]);
    expect(run.values!.frame_inter_arrival).toEqual([32.5, 33, 33.5]);
    expect(run.values!.input_to_effect).toBeNull();
    expect(run.values!.auth).toEqual([45.678]);
    expect(run.values!.start_game).toEqual([12.345]);

    const m = g.metrics;
    expect(m.input_to_effect).toBeNull();
    expect(m.input_to_next_frame!.samples).toBe(6);
    expectClose(m.input_to_next_frame!.median, 15.5);
    expectClose(m.input_to_audio!.median, 20);
    expect(m.auth!.samples).toBe(2);
    expect(m.auth!.max).toBe(54.321);

    // Per-RPC: only this deployment's games; stats_old.csv rows already in stats.csv are skipped.
    const rpc = Object.fromEntries(g.rpc.map((r) => [r.label, r.stats]));
    expect(Object.keys(rpc).sort()).toEqual(["engine → music PlaySound", "initiator → engine StartGame"]);
    expect(rpc["engine → music PlaySound"]!.samples).toBe(3);
    expect(rpc["engine → music PlaySound"]!.max).toBe(3.5);
    expect(rpc["initiator → engine StartGame"]!.samples).toBe(2);
    expect(rpc["initiator → engine StartGame"]!.min).toBe(2);
    expect(rpc["initiator → engine StartGame"]!.max).toBe(4);

    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).toMatch(/\| input-to-effect \| n\/a \| n\/a \|/);
    const csv = await readFile(join(out, "metrics.csv"), "utf8");
    expect(csv).not.toContain("input_to_effect");
    expect(csv).toContain(`flappygo:monolith_single_instance,${FG_SEED},input_to_next_frame,6,`);
  });

  it("finds FlappyGo runs under a plain run-folder argument too, named after the folder without deploy_type", async () => {
    const root = await tempDir();
    const out = await tempDir();
    const data = await writeFlappyGoData(root);
    const { rm } = await import("node:fs/promises");
    await rm(join(data, "deploy_type"));
    const { report } = await generateReport({ inputs: [data], outDir: out });
    expect(report.groups.map((g) => g.deployment)).toEqual(["flappygo:20250509_174825"]);
  });
});
