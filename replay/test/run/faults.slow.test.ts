import { execFileSync } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseReplayArgs } from "../../src/run/options.js";
import { replay, type RunSummary } from "../../src/run/runner.js";
import { type RunningDeployment, startStudyDeployment } from "../../src/study/deployment.js";
import { REPO, topologyOnFreePorts } from "./free-topology.js";

// Faults in the middle of a game end the run as failed, with a reason, within bounded time.
const EASY = join(REPO, "replay/traces/6977347407732442987.csv");
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function deploy(topology: string): Promise<RunningDeployment> {
  const topo = await topologyOnFreePorts(topology);
  const d = await startStudyDeployment(topo.file, join(topo.dir, "data"));
  cleanups.push(async () => {
    await d.stop();
    await rm(topo.dir, { recursive: true, force: true });
  });
  return d;
}

async function replayWithFault(d: RunningDeployment, out: string, fault: () => void): Promise<RunSummary> {
  const opts = await parseReplayArgs(["--url", d.webUrl, "--trace", EASY, "--runs", "1", "--out", out, "--slack-ms", "5000"], REPO);
  const timer = setTimeout(fault, 7000); // the game starts 2–4 s into a run and lasts 13 s
  const started = Date.now();
  const report = await replay(opts, () => {});
  clearTimeout(timer);
  expect(report).toMatchObject({ runs: 1, failed: 1 });
  expect(Date.now() - started).toBeLessThan(60_000);
  const seedDir = join(out, opts.deployment ?? "", "");
  const summaryFile = report.folders[0]!;
  expect(summaryFile.startsWith(seedDir)).toBe(true);
  return JSON.parse(await readFile(join(summaryFile, "summary.json"), "utf8")) as RunSummary;
}

describe("faults mid-game", () => {
  it("killing the latency proxy fails the run with a reason instead of hanging", async () => {
    const d = await deploy("multiaz");
    expect(d.toxiproxyUrl).toBeDefined();
    const port = new URL(d.toxiproxyUrl!).port;
    const summary = await replayWithFault(d, join(REPO, "test-results", "faults-proxy"), () => {
      execFileSync("pkill", ["-KILL", "-f", `toxiproxy-server -host 127.0.0.1 -port ${port}`]);
    });
    expect(summary.status).toBe("failed");
    expect(summary.failure?.reason).toMatch(/stream|closed|game over|handshake|failed/i);
    console.log("proxy killed:", summary.failure);
  }, 120_000);

  it("killing a component mid-game fails the run with a reason", async () => {
    const d = await deploy("microservices");
    let killed: number | undefined;
    const summary = await replayWithFault(d, join(REPO, "test-results", "faults-component"), () => {
      killed = d.pidOf("engine");
      if (killed) process.kill(killed, "SIGKILL");
    });
    expect(killed).toBeDefined();
    expect(summary.status).toBe("failed");
    console.log("engine killed:", summary.failure);
  }, 120_000);
});
