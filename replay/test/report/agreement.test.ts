import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildReport } from "../../src/report/aggregate.js";
import { runReportCli } from "../../src/report/cli.js";
import { discoverRuns } from "../../src/report/load.js";
import { metricsJson } from "../../src/report/render.js";
import { removeTempDirs, rttRows, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";

afterAll(removeTempDirs);

const SEED = "6977347407732442987";

function rows(audioMs: number): Row[] {
  const ticks = tickFrames(500, Array.from({ length: 400 }, () => 33));
  const out: Row[] = [...rttRows(), ...ticks];
  for (let j = 1; j <= 15; j++) {
    const sent = ticks[20 * j]!.time + 5;
    out.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    out.push({ type: "audio", direction: "recv", time: sent + audioMs, seq: j, tick: 20 * j, sound: "flap", bytes: 30 });
  }
  return out;
}

/** A study folder whose microservices runs are `penalty(run)` ms slower on input → audio than the monolith's. */
async function study(penalty: (run: number) => number): Promise<string> {
  const dir = await tempDir();
  for (const run of [1, 2, 3, 4]) {
    await writeRun(join(dir, "runs"), { deployment: "monolith", seed: SEED, run, rows: rows(2 + run) });
    await writeRun(join(dir, "runs"), { deployment: "microservices", seed: SEED, run, rows: rows(2 + run + penalty(run)) });
  }
  const { runs, problems } = await discoverRuns(join(dir, "runs"));
  await mkdir(join(dir, "report"));
  await writeFile(join(dir, "report", "metrics.json"), JSON.stringify(metricsJson(buildReport(runs, problems, [dir]))));
  return dir;
}

async function compare(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runReportCli(["compare", ...args], { cwd: "/", out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("pnpm report compare", () => {
  it("says whether two studies' penalty intervals overlap, metric by metric", async () => {
    const a = await study((run) => 1.5 + (run % 2) * 0.2);
    const same = await study((run) => 1.6 + (run % 2) * 0.2);
    const other = await study((run) => 4 + (run % 2) * 0.2);
    const agree = await compare(a, join(same, "report"));
    expect(agree.code).toBe(0);
    expect(agree.out).toMatch(/\| microservices \| 6977347407732442987 \| input-to-audio\s+\|\s+1\.6\d* \|\s+1\.5\d* … 1\.7\d* \|\s+1\.7\d* \|\s+1\.6\d* … 1\.8\d* \|\s+yes \|/);
    const differ = await compare(a, join(other, "report", "metrics.json"));
    expect(differ.code).toBe(1);
    expect(differ.out).toMatch(/\| input-to-audio\s+\|[^\n]*\| +NO \|/);
    expect(differ.out).toMatch(/\d+ of \d+ intervals overlap/);
  });

  it("explains what it needs when a study has no metrics.json or is not a report", async () => {
    const empty = await tempDir();
    expect(await compare(empty, empty)).toMatchObject({ code: 2, err: expect.stringContaining(`no metrics.json at ${empty}`) });
    await writeFile(join(empty, "metrics.json"), '{"format":"something-else"}');
    expect(await compare(empty, empty)).toMatchObject({ code: 2, err: expect.stringContaining("not a flaplab-report/1 metrics.json") });
    await writeFile(join(empty, "metrics.json"), "{ broken");
    expect(await compare(empty, empty)).toMatchObject({ code: 2, err: expect.stringContaining("metrics.json: ") });
    expect(await compare(empty)).toMatchObject({ code: 2, err: expect.stringContaining("compare takes two studies") });
  });
});
