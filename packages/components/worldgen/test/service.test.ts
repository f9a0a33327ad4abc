import { create } from "@bufbuild/protobuf";
import { Code, createHandlerContext } from "@connectrpc/connect";
import {
  GenerateWorldRequestSchema,
  WorldGenService,
  type GenerateWorldRequest,
} from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { describe, expect, it } from "vitest";
import { createWorldGen, generateWorld, worldgenComponent } from "../src/index.js";
import { rejection } from "@flaplab/testkit";

function context() {
  return createHandlerContext({
    service: WorldGenService,
    method: WorldGenService.method.generateWorld,
    protocolName: "test",
    requestMethod: "POST",
    url: "http://localhost/flaplab.worldgen.v1.WorldGenService/GenerateWorld",
  });
}

async function call(impl: ReturnType<typeof createWorldGen>, request: GenerateWorldRequest) {
  return await impl.generateWorld(request, context());
}

describe("worldgenComponent", () => {
  it("mounts WorldGenService with no public methods", () => {
    expect(worldgenComponent.name).toBe("worldgen");
    expect(worldgenComponent.service).toBe(WorldGenService);
    expect(worldgenComponent.publicMethods).toEqual([]);
  });
});

describe("createWorldGen().generateWorld", () => {
  const viewport = { width: 480, height: 640 };

  it("returns generateWorld's world for the request seed", async () => {
    const seed = 6977347407732442987n;
    const res = await call(createWorldGen(), create(GenerateWorldRequestSchema, { gameId: "g1", viewport, seed }));
    const spec = generateWorld(seed, viewport);
    expect(res.world?.seed).toBe(seed);
    expect(res.world?.viewport).toMatchObject(viewport);
    expect(res.world?.pipeSpacing).toBe(spec.pipeSpacing);
    expect(res.world?.pipes?.map((p) => ({ gapStart: p.gapStart, gapHeight: p.gapHeight }))).toEqual(spec.pipes);
  });

  it("treats an explicit seed 0 as a seed", async () => {
    const res = await call(
      createWorldGen({ randomSeed: () => 5n }),
      create(GenerateWorldRequestSchema, { viewport, seed: 0n }),
    );
    expect(res.world?.seed).toBe(0n);
  });

  it("draws the seed from deps.randomSeed when the request has none", async () => {
    const drawn = [111n, 222n];
    const impl = createWorldGen({ randomSeed: () => drawn.shift()! });
    const a = await call(impl, create(GenerateWorldRequestSchema, { viewport }));
    const b = await call(impl, create(GenerateWorldRequestSchema, { viewport }));
    expect(a.world?.seed).toBe(111n);
    expect(b.world?.seed).toBe(222n);
    expect(a.world?.pipes?.map((p) => p.gapStart)).toEqual(generateWorld(111n, viewport).pipes.map((p) => p.gapStart));
  });

  it("draws a random seed by default", async () => {
    const impl = createWorldGen();
    const a = await call(impl, create(GenerateWorldRequestSchema, { viewport }));
    const b = await call(impl, create(GenerateWorldRequestSchema, { viewport }));
    expect(a.world?.seed).not.toBe(b.world?.seed);
    expect(a.world!.seed! > 0n).toBe(true);
  });

  it.each([
    ["missing", undefined, /viewport is required/],
    ["zero width", { width: 0, height: 640 }, /width/],
    ["zero height", { width: 480, height: 0 }, /height/],
    ["negative width", { width: -480, height: 640 }, /width/],
    ["absurd width", { width: 10_001, height: 640 }, /width.*10000/],
    ["absurd height", { width: 480, height: 1_000_000 }, /height/],
    ["too small for the generator", { width: 3, height: 640 }, /width must be between 4/],
    ["too short for the generator", { width: 480, height: 18 }, /height must be between 19/],
  ])("rejects a %s viewport with InvalidArgument", async (_name, vp, message) => {
    const err = await rejection(
      call(createWorldGen(), create(GenerateWorldRequestSchema, { viewport: vp, seed: 1n })),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(message);
  });

  it("accepts the limits", async () => {
    for (const vp of [
      { width: 4, height: 19 },
      { width: 10_000, height: 10_000 },
    ]) {
      const res = await call(createWorldGen(), create(GenerateWorldRequestSchema, { viewport: vp, seed: 42n }));
      expect(res.world?.pipes).toHaveLength(100);
    }
  });
});
