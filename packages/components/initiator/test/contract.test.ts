import { Code } from "@connectrpc/connect";
import { generateKeyPairSync } from "node:crypto";
import { createEngine, engineComponent, GameTable, SnapshotKeeper } from "@flaplab/engine";
import { MemorySnapshotStore } from "@flaplab/snapshots";
import { createStreamTicketSigner, createStreamTicketVerifier } from "@flaplab/identity";
import { describeContract } from "@flaplab/testkit";
import { createWorldGen, generateWorld, worldgenComponent } from "@flaplab/worldgen";
import { expect, it } from "vitest";
import { createInitiator, initiatorComponent, singleEngine } from "../src/index.js";

const endpoints = {
  engineUrl: "https://engine.test/game",
  musicUrl: "https://music.test/music",
  engineWsUrl: "ws://engine.test/game",
  musicWsUrl: "ws://music.test/music",
};
const serviceKey = generateKeyPairSync("ed25519");
/** The engine peer of the current mode, to stage a game another engine left. */
const engine: { games?: GameTable; keeper?: SnapshotKeeper } = {};
const tickets = createStreamTicketSigner({ privateKey: serviceKey.privateKey });
const ticketVerifier = createStreamTicketVerifier({ publicKey: serviceKey.publicKey });

describeContract(
  {
    component: initiatorComponent,
    create: (env) =>
      createInitiator({
        worldgen: env.client(worldgenComponent),
        engines: singleEngine({ name: "engine", client: env.client(engineComponent), engineUrl: endpoints.engineUrl, engineWsUrl: endpoints.engineWsUrl }),
        music: endpoints,
        tickets,
      }),
    peers: [
      { component: worldgenComponent, create: () => createWorldGen() },
      {
        component: engineComponent,
        create: () => {
          engine.games = new GameTable();
          engine.keeper = new SnapshotKeeper({ store: new MemorySnapshotStore(), engine: "engine", games: engine.games });
          return createEngine({ games: engine.games, snapshots: engine.keeper });
        },
      },
    ],
  },
  (t) => {
    it("starts a game for a seed: world generator, then engine; returns what the client needs", async () => {
      const res = await t.client.startGame({ seed: 6977347407732442987n });
      expect(res.gameId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.seed).toBe(6977347407732442987n);
      expect(res.engineUrl).toBe(endpoints.engineUrl);
      expect(res.musicUrl).toBe(endpoints.musicUrl);
      expect(res.engineWsUrl).toBe(endpoints.engineWsUrl);
      expect(res.musicWsUrl).toBe(endpoints.musicWsUrl);
      // FlappyGo's pipesToRender: int(480*3) / (72 + spacing 191) = 5 for this seed.
      expect(res.pipesInView).toBe(5);
    });

    it("issues a stream ticket for the new game and the caller", async () => {
      const res = await t.client.startGame({});
      const ticket = await ticketVerifier.verify(res.streamTicket);
      expect(ticket.gameId).toBe(res.gameId);
      expect(ticket.username).toBe("alice");
      expect(ticket.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
      const other = await t.client.startGame({});
      expect(other.streamTicket).not.toBe(res.streamTicket);
      expect((await ticketVerifier.verify(other.streamTicket)).gameId).toBe(other.gameId);
      const bobs = await (await t.as("bob")).startGame({});
      expect(await ticketVerifier.verify(bobs.streamTicket)).toMatchObject({ gameId: bobs.gameId, username: "bob" });
    });

    it("logs both downstream calls in order, tagged with the new game id", async () => {
      const res = await t.client.startGame({ seed: 8525333463046388971n });
      const calls = t.calls.filter((r) => r.gameId === res.gameId && r.side === "client");
      expect(calls.map((r) => `${r.src}.${r.srcVerb}->${r.dst}.${r.dstVerb}`)).toEqual([
        "initiator.StartGame->worldgen.GenerateWorld",
        "initiator.StartGame->engine.StartGame",
      ]);
      expect(calls.every((r) => r.code === "ok")).toBe(true);
      const mode = t.mode.startsWith("networked") ? "networked" : t.mode;
      expect(calls.every((r) => r.mode === mode)).toBe(true);
    });

    it("draws a random seed when none is given, and the seed reproduces the world", async () => {
      const a = await t.client.startGame({});
      const b = await t.client.startGame({});
      expect(a.seed).not.toBe(b.seed);
      expect(a.gameId).not.toBe(b.gameId);
      const world = generateWorld(a.seed, { width: 480, height: 640 });
      expect(a.pipesInView).toBe(Math.trunc(1440 / (72 + Math.trunc(world.pipeSpacing))));
    });

    it("rejects a bad viewport or bird as InvalidArgument", async () => {
      await expect(t.client.startGame({ viewport: { width: -5, height: 640 } })).rejects.toMatchObject({
        code: Code.InvalidArgument,
      });
      await expect(t.client.startGame({ bird: { width: 900, height: 24 } })).rejects.toMatchObject({
        code: Code.InvalidArgument,
      });
    });

    it("resumes a game from its snapshot for its player only, with a new ticket and the engine's URLs", async () => {
      const started = await t.client.startGame({ seed: 6977347407732442987n });
      // The game as another engine left it: its snapshot stored, gone from the engine's table.
      const game = engine.games!.get(started.gameId)!;
      engine.keeper!.changed(game);
      await engine.keeper!.flush();
      engine.games!.delete(started.gameId);
      const bob = await t.as("bob");
      await expect(bob.resumeGame({ gameId: started.gameId })).rejects.toMatchObject({ code: Code.PermissionDenied });
      const resumed = await t.client.resumeGame({ gameId: started.gameId });
      expect(resumed.tick).toBe(0);
      expect(resumed.game).toMatchObject({
        gameId: started.gameId,
        seed: 6977347407732442987n,
        engineUrl: endpoints.engineUrl,
        engineWsUrl: endpoints.engineWsUrl,
        musicUrl: endpoints.musicUrl,
        pipesInView: started.pipesInView,
      });
      expect(await ticketVerifier.verify(resumed.game!.streamTicket)).toMatchObject({ gameId: started.gameId, username: "alice" });
      expect(engine.games!.has(started.gameId)).toBe(true);
      await expect(t.client.resumeGame({ gameId: "no-such-game" })).rejects.toMatchObject({ code: Code.NotFound });
      await expect(t.client.resumeGame({ gameId: "" })).rejects.toMatchObject({ code: Code.InvalidArgument });
    });

    it("needs a token", async () => {
      await expect(t.clientAs(undefined).startGame({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    });
  },
);
