import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReplayArgs } from "../../src/run/options.js";
import { NO_INPUT_DEFERRAL_ARG } from "../../src/run/play.js";
import { replay, type RunSummary } from "../../src/run/runner.js";
import { type RunningDeployment, startStudyDeployment } from "../../src/study/deployment.js";
import { REPO, topologyOnFreePorts } from "./free-topology.js";

// The published easy trace replayed 5 times in Chromium against `pnpm dev monolith`.
const EASY = join(REPO, "replay/traces/6977347407732442987.csv");

let dir: string;
let deployment: RunningDeployment;
let webUrl: string;

beforeAll(async () => {
  const topo = await topologyOnFreePorts("monolith");
  dir = topo.dir;
  deployment = await startStudyDeployment(topo.file, join(dir, "data"));
  webUrl = deployment.webUrl;
}, 90_000);

afterAll(async () => {
  await deployment?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("replaying the easy trace against the monolith", () => {
  it("scores the simulator's 7 in each of 3 runs and writes a folder per run with dispatch lateness", async () => {
    const out = join(dir, "runs");
    const opts = await parseReplayArgs(
      ["--url", webUrl, "--trace", EASY, "--runs", "3", "--out", out, "--rpc-logs", join(dir, "data/logs")],
      REPO,
    );
    const lines: string[] = [];
    const report = await replay(opts, (l) => lines.push(l));
    expect(report, lines.join("\n")).toMatchObject({ runs: 3, ok: 3, failed: 0 });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^run 1\/3 {2}seed 6977347407732442987 {2}score 7\/7 {2}ok/);

    const seedDir = join(out, "monolith", "6977347407732442987");
    expect((await readdir(seedDir)).sort()).toEqual(["run-001", "run-002", "run-003"]);
    for (const run of await readdir(seedDir)) {
      const summary = JSON.parse(await readFile(join(seedDir, run, "summary.json"), "utf8")) as RunSummary;
      expect(summary).toMatchObject({ format: "flaplab-run/1", status: "ok", score: 7, ticks: 402, expected: { score: 7, ticks: 402 } });
      expect(summary.dispatch.presses).toBe(14);
      expect(summary.dispatch.samples).toHaveLength(14);
      expect(summary.dispatch.latenessMs.p50).not.toBeNull();
      expect(summary.latency.authMs).toBeGreaterThan(0);
      expect(summary.latency.startMs).toBeGreaterThan(0);
      expect(summary.browser.args).toContain(NO_INPUT_DEFERRAL_ARG);
      const csv = await readFile(join(seedDir, run, "latency.csv"), "utf8");
      expect(csv.split("\n")[0]).toBe("type,direction,time,seq,tick,reflected_seq,bytes,sound,ms,note,kind");
      expect(csv.split("\n").filter((l) => l.startsWith("frame,recv,") && l.endsWith(",tick"))).toHaveLength(402);
      const rpc = (await readFile(join(seedDir, run, "rpc.ndjson"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { gameId: string; dst: string });
      expect(rpc.every((r) => r.gameId === summary.gameId)).toBe(true);
      expect(rpc.map((r) => r.dst)).toEqual(expect.arrayContaining(["worldgen", "engine", "music", "score"]));
    }
  }, 240_000);

  it("keeps a failed run, with its reason, when the game does not match the simulator", async () => {
    // A trace whose flaps come too late to pass pipe 0: it cannot reach the recorded score.
    const wrong = join(dir, "6977347407732442987.json");
    await writeFile(wrong, JSON.stringify({ format: "flaplab-trace/1", seed: "6977347407732442987", inputs: [{ t: 100 }] }));
    const out = join(dir, "failing");
    const opts = await parseReplayArgs(["--url", webUrl, "--trace", wrong, "--runs", "1", "--retries", "1", "--out", out], REPO);
    // The simulator agrees with the engine here, so make the expectation disagree by replaying
    // against a different seed in the page URL: the deployment plays a different world.
    const report = await replay({ ...opts, url: webUrl, traces: [{ ...opts.traces[0]!, seed: 8525333463046388971n }] }, () => {});
    expect(report).toMatchObject({ runs: 1, failed: 1, retried: 1 });
    const seedDir = join(out, "monolith", "8525333463046388971");
    expect((await readdir(seedDir)).sort()).toEqual(["run-001", "run-001.attempt-1"]);
    const summary = JSON.parse(await readFile(join(seedDir, "run-001", "summary.json"), "utf8")) as RunSummary;
    expect(summary.status).toBe("failed");
    expect(summary.failure?.reason).toMatch(/differs from the simulator's/);
    expect(summary.attempt).toBe(2);
  }, 120_000);

  it("plays the same game over the plain WebSocket link (?link=websocket), filed apart", async () => {
    const out = join(dir, "websocket");
    const opts = await parseReplayArgs(["--url", webUrl, "--trace", EASY, "--runs", "1", "--out", out, "--link", "websocket"], REPO);
    const lines: string[] = [];
    const report = await replay(opts, (l) => lines.push(l));
    expect(report, lines.join("\n")).toMatchObject({ runs: 1, ok: 1, failed: 0 });
    const runDir = join(out, "monolith+websocket", "6977347407732442987", "run-001");
    const summary = JSON.parse(await readFile(join(runDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary).toMatchObject({ status: "ok", score: 7, ticks: 402, deployment: { name: "monolith+websocket", link: "websocket" } });
    const csv = await readFile(join(runDir, "latency.csv"), "utf8");
    expect(csv).toMatch(/game via plain websocket/);
    expect(csv).toMatch(/music via plain websocket/);
    expect(csv.split("\n").filter((l) => l.startsWith("frame,recv,") && l.endsWith(",tick"))).toHaveLength(402);
  }, 120_000);
});
