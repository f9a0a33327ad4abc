import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "./free-topology.js";

// `pnpm study --load` end to end, in small: the monolith without load and under 4 bot players, one
// run of the easy trace at each level.
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("the study with load as a dimension", () => {
  it("plays the trace at level 0 and while 4 bots play, and reports both levels with no game lost", async () => {
    const out = await mkdtemp(join(tmpdir(), "flaplab-study-load-"));
    dirs.push(out);
    const args = ["study", "--load", "0,4", "--runs", "1", "--deployments", "monolith", "--trace", "replay/traces/6977347407732442987.csv", "--out", out];
    const { stdout } = await promisify(execFile)("pnpm", args, { cwd: REPO, timeout: 420_000, killSignal: "SIGTERM", maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toMatch(/study: 2 runs ok, 0 failed/);
    expect(stdout).toMatch(/load: 4 players ramped up on monolith@4/);

    const md = await readFile(join(out, "report", "report.md"), "utf8");
    const load = md.slice(md.indexOf("## Load"), md.indexOf("\n## ", md.indexOf("## Load") + 5));
    expect(load, md).toContain("## Load");
    // The human traces' table: one row per level, both runs ok, no game lost (Chromium runs and bot
    // games while they were played; games that ended off the simulator's score are the last column).
    const human = (level: number) => new RegExp(`^\\| monolith \\| ${level} \\| 1 / 1 \\|[^\\n]*\\| 0 \\| \\d+ \\|$`, "m");
    expect(load).toMatch(human(0));
    expect(load).toMatch(human(4));
    // The bots' table: at level 4 none was lost with a worker and the generator held the level;
    // every game started is completed, failed (off the simulator's score, or in the ramp) or cut by
    // the drain.
    const bots = /^\| monolith \| 4 \| (\d+) \/ (\d+) \| (\d+) \/ \d+ \| (\d+) \/ 0 \| (\d+) \| [^|]+ \| [^|]+ \| held \|/m.exec(load);
    expect(bots, load).not.toBeNull();
    const [completed, started, duringRuns, failed, unfinished] = bots!.slice(1).map(Number) as [number, number, number, number, number];
    expect(completed + failed + unfinished).toBe(started);
    expect(duringRuns).toBeGreaterThanOrEqual(4);
    // One sentence names the monolith's saturation point (whether this machine kept the ticks is its own business).
    expect(load).toMatch(/^- monolith (kept its ticks|saturates)/m);

    // The bots' files and the study's record of the level.
    const level = JSON.parse(await readFile(join(out, "load", "monolith@4", "level.json"), "utf8"));
    expect(level).toMatchObject({ format: "flaplab-load-level/1", level: 4, runFolders: ["monolith@4"], covered: true });
    expect(level.cpu[0].pct).toBeGreaterThan(0);
    const bots4 = JSON.parse(await readFile(join(out, "load", "monolith@4", "summary.json"), "utf8"));
    expect(bots4.games).toMatchObject({ lost: 0 });
    const html = await readFile(join(out, "report", "report.html"), "utf8");
    expect(html).toMatch(/<section id="load">[\s\S]*<svg[\s\S]*<\/section>/);
  }, 480_000);
});
