// Attack: a player calls EngineService.StartGame directly with a world of their own (gaps 2e9 px
// tall: no pipe can be hit), then plays it. Worlds must come only from the world generator: the
// engine's StartGame and HandleInput are internal.
import { EngineService, Key } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { MusicService, Sound } from "@flaplab/contracts/music/v1/music_pb";
import { describe, expect, it } from "vitest";
import { monolithWithPlayer, outcome } from "./credentials-harness.js";

const t = monolithWithPlayer();

const openWorld = {
  seed: 1n,
  pipeSpacing: 200,
  pipes: Array.from({ length: 100 }, () => ({ gapStart: -1e9, gapHeight: 2e9 })),
};

describe("a player bringing their own world", () => {
  it("cannot create a game on the engine directly, in Connect or gRPC", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const engine = t.m.client(EngineService, protocol, { authorization: `Bearer ${t.token}` });
      const gameId = `own-world-${protocol}`;
      expect(await outcome(engine.startGame({ gameId, world: openWorld, bird: { width: 34, height: 24 } }))).toBe("permission_denied");
      expect(await outcome(engine.handleInput({ gameId, key: Key.SPACE, seq: 1 }))).toBe("permission_denied");
      // The game was never created: even the engine's own credential finds nothing to play.
      const asInitiator = await (await t.m.keys()).components.tokenFor("initiator", "engine", "mallory");
      const internal = t.m.client(EngineService, protocol, { authorization: `Bearer ${asInitiator}` });
      expect(await outcome(internal.handleInput({ gameId, key: Key.SPACE, seq: 1 }))).toBe("not_found");
    }
  });

  it("cannot call the world generator or push sounds either, but can still start a normal game", async () => {
    const headers = { authorization: `Bearer ${t.token}` };
    const worldgen = t.m.client(WorldGenService, "grpc", headers);
    expect(await outcome(worldgen.generateWorld({ gameId: "w1", seed: 1n }))).toBe("permission_denied");
    const music = t.m.client(MusicService, "connect", headers);
    expect(await outcome(music.playMusic({ gameId: "w1", sound: Sound.FLAP }))).toBe("permission_denied");
    const game = await t.m.client(InitiatorService, "connect", headers).startGame({ seed: 6977347407732442987n });
    expect(game.seed).toBe(6977347407732442987n);
    expect(game.pipesInView).toBeGreaterThan(0);
  });
});
