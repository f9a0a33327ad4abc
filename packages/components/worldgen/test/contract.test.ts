import { Code } from "@connectrpc/connect";
import { describeContract, rejection } from "@flaplab/testkit";
import { expect, it } from "vitest";
import { createWorldGen, generateWorld, worldgenComponent } from "../src/index.js";

const viewport = { width: 480, height: 640 };

describeContract(
  {
    component: worldgenComponent,
    caller: "initiator",
    create: () => createWorldGen(),
    peers: [],
  },
  (t) => {
    it("returns generateWorld's world for a seed", async () => {
      const seed = 8525333463046388971n;
      const { world } = await t.client.generateWorld({ gameId: "g1", viewport, seed });
      const spec = generateWorld(seed, viewport);
      expect(world?.seed).toBe(seed);
      expect(world?.viewport?.width).toBe(480);
      expect(world?.viewport?.height).toBe(640);
      expect(world?.pipeSpacing).toBe(spec.pipeSpacing);
      expect(world?.pipes.map((p) => ({ gapStart: p.gapStart, gapHeight: p.gapHeight }))).toEqual(spec.pipes);
    });

    it("draws a random seed when none is sent, and that seed reproduces the world", async () => {
      const a = (await t.client.generateWorld({ gameId: "g2", viewport })).world;
      const b = (await t.client.generateWorld({ gameId: "g3", viewport })).world;
      expect(a && b).toBeTruthy();
      expect(a!.seed).not.toBe(b!.seed);
      const again = (await t.client.generateWorld({ gameId: "g4", viewport, seed: a!.seed })).world;
      expect(again?.pipeSpacing).toBe(a!.pipeSpacing);
      expect(again?.pipes).toEqual(a!.pipes);
    });

    it("rejects a bad viewport with InvalidArgument", async () => {
      for (const vp of [undefined, { width: 0, height: 640 }, { width: 480, height: -1 }, { width: 480, height: 20_000 }]) {
        const err = await rejection(t.client.generateWorld({ gameId: "g5", viewport: vp, seed: 1n }));
        expect(err.code).toBe(Code.InvalidArgument);
        expect(err.rawMessage).toMatch(/viewport/);
      }
    });

    it("rejects a call without a token with Unauthenticated", async () => {
      const err = await rejection(t.clientAs(undefined).generateWorld({ gameId: "g6", viewport, seed: 1n }));
      expect(err.code).toBe(Code.Unauthenticated);
    });

    it("refuses GenerateWorld from a player's own token with PermissionDenied", async () => {
      const err = await rejection(t.clientAs(await t.token("mallory")).generateWorld({ gameId: "g7", viewport, seed: 1n }));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(err.rawMessage).toMatch(/internal/);
    });
  },
);
