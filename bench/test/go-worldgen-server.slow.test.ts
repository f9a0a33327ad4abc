// The bench's Go reference world generator (bench/go-worldgen-server) does the work FlapLab's does:
// for a seed it answers the world @flaplab/worldgen generates, over gRPC from Connect's client,
// and refuses a viewport too small with invalid_argument. Slow tier: it builds the Go program.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { generateWorld } from "@flaplab/worldgen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGoProgram } from "../src/go-build.js";
import { roundRatios, type IdleMeasurement } from "../src/idle-hop.js";

let proc: ChildProcess | undefined;
let port = 0;

beforeAll(async () => {
  const binary = await buildGoProgram("go-worldgen-server");
  proc = spawn(binary, ["-addr", "127.0.0.1:0"], { stdio: ["pipe", "pipe", "inherit"] });
  port = await new Promise<number>((resolve) => createInterface({ input: proc!.stdout! }).once("line", (l) => resolve(Number(/^listening (\d+)$/.exec(l)![1]))));
}, 300_000);

afterAll(() => {
  proc?.stdin?.end();
});

describe("the Go reference world generator", () => {
  it("answers the world FlapLab's generator makes for the seed, over gRPC", async () => {
    const client = createClient(WorldGenService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    for (const seed of [6977347407732442987n, 1n, 424242n]) {
      const { world } = await client.generateWorld({ gameId: "g", viewport: { width: 480, height: 640 }, seed });
      const expected = generateWorld(seed, { width: 480, height: 640 });
      expect(world?.seed).toBe(seed);
      expect(world?.viewport).toMatchObject({ width: 480, height: 640 });
      expect(world?.pipeSpacing).toBe(expected.pipeSpacing);
      expect(world?.pipes.map((p) => [p.gapStart, p.gapHeight])).toEqual(expected.pipes.map((p) => [p.gapStart, p.gapHeight]));
    }
  });

  it("refuses a viewport too small to draw from with invalid_argument, and keeps serving", async () => {
    const client = createClient(WorldGenService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
    const err = await client.generateWorld({ gameId: "g", viewport: { width: 2, height: 2 }, seed: 1n }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((await client.generateWorld({ gameId: "g", viewport: { width: 480, height: 640 }, seed: 1n })).world?.pipes).toHaveLength(100);
  });
});

describe("the idle section's ratios", () => {
  it("divide FlapLab's figure by Go's within each round, skipping a round that misses either", () => {
    const m = (round: number, server: "flaplab" | "go", p50: number | null): IdleMeasurement => ({ round, server, pace: "paced", calls: 10, p50, p99: null, cpuUsPerCall: null });
    expect(roundRatios([m(1, "flaplab", 300), m(1, "go", 200), m(2, "go", 100), m(2, "flaplab", 150), m(3, "flaplab", 99)], "paced", "p50")).toEqual([1.5, 1.5]);
    expect(roundRatios([m(1, "flaplab", 300), m(1, "go", null)], "paced", "p50")).toEqual([]);
  });
});
