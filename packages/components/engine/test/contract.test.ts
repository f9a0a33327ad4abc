import { Code } from "@connectrpc/connect";
import { Key, PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import { describeContract, rejection } from "@flaplab/testkit";
import { expect, it } from "vitest";
import { createEngine, engineComponent } from "../src/index.js";
import { fairWorld } from "./fixtures.js";

describeContract(
  {
    component: engineComponent,
    caller: "initiator",
    create: () => createEngine(),
    peers: [],
  },
  (t) => {
    // Game ids are unique per mode (each mode gets a fresh engine).
    it("starts a game and accepts its owner's inputs", async () => {
      const started = await t.client.startGame({ gameId: "c1", world: fairWorld(), bird: { width: 34, height: 24 } });
      expect(started.gameId).toBe("c1");
      expect(started.pipesInView).toBe(5);
      const first = await t.client.handleInput({ gameId: "c1", key: Key.SPACE, seq: 1, clientTimeMs: 10 });
      expect(first.tick).toBe(1);
      expect(first.state).toBe(PlayState.PLAYING);
      const second = await t.client.handleInput({ gameId: "c1", key: Key.SPACE, seq: 2, clientTimeMs: 20 });
      expect(second.tick).toBe(1); // no tick has run: still before tick 1
      expect(second.state).toBe(PlayState.PLAYING);
    });

    it("rejects another player's input with PermissionDenied", async () => {
      await t.client.startGame({ gameId: "c2", world: fairWorld() });
      const bob = await t.as("bob");
      const err = await rejection(bob.handleInput({ gameId: "c2", key: Key.SPACE, seq: 1 }));
      expect(err.code).toBe(Code.PermissionDenied);
    });

    it("rejects calls without a token with Unauthenticated", async () => {
      const anon = t.clientAs(undefined);
      expect((await rejection(anon.startGame({ gameId: "c3", world: fairWorld() }))).code).toBe(Code.Unauthenticated);
      expect((await rejection(anon.handleInput({ gameId: "c2", key: Key.SPACE }))).code).toBe(Code.Unauthenticated);
    });

    it("refuses StartGame and HandleInput from a player's own token with PermissionDenied", async () => {
      const player = t.clientAs(await t.token("alice"));
      expect((await rejection(player.startGame({ gameId: "c6", world: fairWorld() }))).code).toBe(Code.PermissionDenied);
      await t.client.startGame({ gameId: "c7", world: fairWorld() });
      expect((await rejection(player.handleInput({ gameId: "c7", key: Key.SPACE, seq: 1 }))).code).toBe(Code.PermissionDenied);
    });

    it("maps bad requests to InvalidArgument, AlreadyExists and NotFound", async () => {
      expect((await rejection(t.client.startGame({ gameId: "c4" }))).code).toBe(Code.InvalidArgument);
      expect((await rejection(t.client.startGame({ gameId: "", world: fairWorld() }))).code).toBe(Code.InvalidArgument);
      await t.client.startGame({ gameId: "c5", world: fairWorld() });
      expect((await rejection(t.client.startGame({ gameId: "c5", world: fairWorld() }))).code).toBe(Code.AlreadyExists);
      expect((await rejection(t.client.handleInput({ gameId: "nope", key: Key.SPACE }))).code).toBe(Code.NotFound);
      expect((await rejection(t.client.handleInput({ gameId: "c5" }))).code).toBe(Code.InvalidArgument);
    });
  },
);
