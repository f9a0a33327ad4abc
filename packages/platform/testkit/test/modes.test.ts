import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { WorldGenService, WorldSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { expect, it } from "vitest";
import { describeContract } from "../src/index.js";

// Two stand-in components that exercise the runtime itself: an initiator that calls a world generator.
const worldgen = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"] });
const initiator = defineComponent({ name: "initiator", service: InitiatorService });

const seenBy = new Map<string, string[]>();

function fakeWorldgen(mode: string): ServiceImpl<typeof WorldGenService> {
  return {
    generateWorld(req, ctx) {
      const users = seenBy.get(mode) ?? [];
      users.push(requirePrincipal(ctx).username);
      seenBy.set(mode, users);
      if (req.gameId === "explode") throw new Error("boom");
      return { world: create(WorldSchema, { seed: req.seed ?? 1n, viewport: req.viewport, pipeSpacing: 200 }) };
    },
  };
}

describeContract(
  {
    component: initiator,
    create: (env) => {
      const worlds = env.client(worldgen);
      return {
        async startGame(req) {
          const { world } = await worlds.generateWorld({ gameId: "game-1", viewport: req.viewport, seed: req.seed });
          if (!world) throw new ConnectError("no world", Code.Internal);
          return { gameId: "game-1", seed: world.seed };
        },
        resumeGame() {
          throw new ConnectError("not part of this test", Code.Unimplemented);
        },
      };
    },
    peers: [{ component: worldgen, create: (env) => fakeWorldgen(env.mode) }],
  },
  (t) => {
    it("serves a call that makes a nested call, forwarding the caller's token", async () => {
      const res = await t.client.startGame({ seed: 42n, viewport: { width: 480, height: 640 } });
      expect(res.gameId).toBe("game-1");
      expect(res.seed).toBe(42n);
      expect(seenBy.get(t.mode)).toContain("alice");
    });

    it("has the callee log its share of a networked nested call, and of no in-process one", () => {
      const served = t.calls.filter((r) => r.src === "initiator" && r.dst === "worldgen" && r.side === "server");
      if (!t.mode.startsWith("networked")) {
        expect(served).toEqual([]);
        return;
      }
      expect(served).toHaveLength(1);
      expect(served[0]).toMatchObject({ srcVerb: "StartGame", dstVerb: "GenerateWorld", gameId: "game-1", mode: "networked", code: "ok" });
      const whole = t.calls.find((r) => r.src === "initiator" && r.dst === "worldgen" && r.side === "client")!;
      expect(served[0]!.durationNs).toBeLessThan(whole.durationNs);
    });

    it("logs the nested call with source, destination, game id and the mode of the edge", () => {
      const rec = t.calls.find((r) => r.src === "initiator" && r.dst === "worldgen" && r.side === "client");
      expect(rec).toBeDefined();
      expect(rec).toMatchObject({ srcVerb: "StartGame", dstVerb: "GenerateWorld", gameId: "game-1", code: "ok" });
      const expected = t.mode.startsWith("networked") ? "networked" : t.mode;
      expect(rec!.mode).toBe(expected);
      expect(rec!.durationNs).toBeGreaterThan(0);
      expect(rec!.protocol).toBe(
        { direct: "in-process", serialized: "connect+proto", "networked-connect-h1": "connect+proto", "networked-grpc-h2c": "grpc" }[t.mode],
      );
    });

    it("rejects a call without a token as Unauthenticated", async () => {
      await expect(t.clientAs(undefined).startGame({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    });

    it("rejects a tampered token as Unauthenticated", async () => {
      const token = await t.token("mallory");
      const [h, p, s] = token.split(".");
      const payload = JSON.parse(Buffer.from(p!, "base64url").toString()) as Record<string, unknown>;
      payload["username"] = "alice";
      payload["sub"] = "alice";
      const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${s}`;
      await expect(t.clientAs(forged).startGame({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    });

    it("rejects an unsigned (alg: none) token as Unauthenticated", async () => {
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      const exp = Math.floor(Date.now() / 1000) + 600;
      const none = `${enc({ alg: "none", typ: "JWT" })}.${enc({ sub: "alice", username: "alice", iss: "flaplab", aud: "flaplab", exp })}.`;
      await expect(t.clientAs(none).startGame({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    });

    it("turns a handler crash into a Connect error and keeps serving", async () => {
      const worlds = t.clientAs(await t.token("alice"));
      await expect(worlds.startGame({ seed: 7n })).resolves.toMatchObject({ seed: 7n });
    });
  },
);

describeContract(
  { component: worldgen, caller: "initiator", create: (env) => fakeWorldgen(`crash-${env.mode}`) },
  (t) => {
    it("reports a thrown non-Connect error as a Connect error and keeps serving", async () => {
      const err = await t.client.generateWorld({ gameId: "explode" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).not.toBe(Code.Unauthenticated);
      const ok = await t.client.generateWorld({ gameId: "fine", seed: 3n });
      expect(ok.world?.seed).toBe(3n);
    });
  },
);
