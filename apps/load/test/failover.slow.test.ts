// A load run against microservices-sharded (three engine processes, snapshots in Redis) during
// which one engine is killed: every bot game ends completed at the simulator's score or is counted
// with its reason; none is silently lost.
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { type Deployment, repositoryTopologyOnFreePorts, startDeployment } from "@flaplab/deployment";
import { loadTopology, type Topology } from "@flaplab/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runLoad } from "../src/coordinator.js";
import { parseLoadArgs } from "../src/options.js";
import { mergeRun } from "../src/summary.js";

let deployment: Deployment;
let topology: Topology;
let dir: string;
const url = (group: string) => `http://${topology.groups.find((g) => g.name === group)!.address}`;

beforeAll(async () => {
  const topo = await repositoryTopologyOnFreePorts("microservices-sharded");
  dir = topo.dir;
  topology = await loadTopology(topo.file);
  deployment = await startDeployment(topo.file, { dataDir: resolve(topo.dir, "data"), web: "none", env: { ...process.env } });
  await deployment.ready;
}, 120_000);

afterAll(async () => {
  await deployment?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("pnpm load while an engine dies", () => {
  it("8 players for 8 s; engine-2 killed (SIGKILL) at t=4s: every game completed at the simulator's score or counted with its reason", async () => {
    const options = parseLoadArgs([
      "--url", url("auth"), "--initiator-url", url("initiator"),
      "--players", "8", "--ramp", "1s", "--duration", "8s", "--game-length", "6s", "--drain", "20s", "--workers", "2",
    ]);
    const lines: string[] = [];
    let killed: string | undefined;
    const run = await runLoad(options, {
      progress: (line) => {
        lines.push(line);
        if (killed === undefined && line.startsWith("t=4s")) {
          const pid = deployment.pidOf("engine-2")!;
          process.kill(pid, "SIGKILL");
          killed = `engine-2 (pid ${pid})`;
        }
      },
    });
    const { summary, games } = mergeRun(run);
    console.log(`killed ${killed}\n${lines.filter((l) => l.startsWith("t=")).slice(-3).join("\n")}\n${JSON.stringify(summary.games)} ${JSON.stringify(summary.failures)}\n${games.map((g) => `${g.bot} ${g.outcome} ${g.reason} score ${g.score} sim ${g.simulatorScore} reconnections ${g.reconnections}`).join("\n")}`);
    expect(killed).toBeDefined();
    expect(run.lost).toEqual([]);
    expect(summary.games.lost).toBe(0);
    expect(games).toHaveLength(summary.games.started);
    for (const g of games) {
      if (g.outcome === "completed") expect(g.score).toBe(g.simulatorScore);
      else expect(g.reason).not.toBe("");
    }
    expect(summary.games.completed + summary.games.failed + summary.games.unfinished).toBe(summary.games.started);
    // The killed engine's games went on elsewhere (a resumed game whose re-sent presses landed on
    // other ticks than the bot meant is counted "score differs from the simulator").
    expect(games.some((g) => g.reconnections > 0)).toBe(true);
    expect(summary.games.completed).toBeGreaterThanOrEqual(summary.games.started / 2);
  }, 240_000);
});
