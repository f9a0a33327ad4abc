// Node's floor in the idle section (src/h2-floor-server.ts) answers what FlapLab's world generator
// answers for the bench's seed, over gRPC from Connect's client, call after call.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { generateWorld } from "@flaplab/worldgen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EASY_SEED } from "../src/seed.js";
import { roundRatios, type IdleMeasurement } from "../src/idle-hop.js";

let proc: ChildProcess | undefined;
let port = 0;

beforeAll(async () => {
  proc = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "../src/h2-floor-server.ts")], { stdio: ["pipe", "pipe", "inherit"] });
  port = await new Promise<number>((resolve) => createInterface({ input: proc!.stdout! }).once("line", (l) => resolve(Number(/^listening (\d+)$/.exec(l)![1]))));
});

afterAll(async () => {
  const exited = new Promise((r) => proc?.once("exit", r));
  proc?.stdin?.end();
  await exited;
});

describe("Node's HTTP/2 floor", () => {
  it("answers the bench seed's world, the same on every call", async () => {
    const client = createClient(WorldGenService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    const expected = generateWorld(EASY_SEED, { width: 480, height: 640 });
    for (let i = 0; i < 3; i++) {
      const { world } = await client.generateWorld({ gameId: "bench-game", viewport: { width: 480, height: 640 }, seed: EASY_SEED });
      expect(world?.seed).toBe(EASY_SEED);
      expect(world?.pipeSpacing).toBe(expected.pipeSpacing);
      expect(world?.pipes.map((p) => [p.gapStart, p.gapHeight])).toEqual(expected.pipes.map((p) => [p.gapStart, p.gapHeight]));
    }
  });

  it("is a base the idle section divides by, round by round", () => {
    const m = (round: number, server: IdleMeasurement["server"], p50: number): IdleMeasurement => ({ round, server, pace: "paced", calls: 10, p50, p99: null, cpuUsPerCall: null });
    const ms = [m(1, "flaplab", 300), m(1, "go", 200), m(1, "node-floor", 150), m(2, "node-floor", 100), m(2, "flaplab", 250), m(2, "go", 125)];
    expect(roundRatios(ms, "paced", "p50", "flaplab", "node-floor")).toEqual([2, 2.5]);
    expect(roundRatios(ms, "paced", "p50", "node-floor", "go")).toEqual([0.75, 0.8]);
    expect(roundRatios(ms, "paced", "p50")).toEqual([1.5, 2]);
  });
});
