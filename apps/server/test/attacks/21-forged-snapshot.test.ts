// Attack: someone who can write the snapshot store (a Redis shared by the engines; here the
// monolith's in-process store, written directly) plants a game: a snapshot with a score near the
// cap, or an origin whose world the generator could never make. Before, ResumeGame continued a
// stored game without the checks a new game gets: any score was played on and recorded, any world
// size accepted. Now what the store gives back passes StartGame's world checks and bounds that
// hold for the game's world, or ResumeGame answers data_loss and nothing enters the engine.
import { create } from "@bufbuild/protobuf";
import { PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import { GameOriginSchema, GameSnapshotSchema } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { generateWorld } from "@flaplab/worldgen";
import type { SnapshotStore } from "@flaplab/snapshots";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcome, startMonolith, type Monolith } from "./credentials-harness.js";

let m: Monolith;
let store: SnapshotStore;
let token: string;

beforeAll(async () => {
  m = await startMonolith();
  store = m.server.mounted.snapshotStore!;
  token = await m.register("mallory");
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

const resume = (gameId: string) => m.client(InitiatorService, "connect", { authorization: `Bearer ${token}` }).resumeGame({ gameId });

/** Writes a game of mallory's into the store: a generated world unless `world` says otherwise, and the snapshot fields given. */
async function plant(gameId: string, snapshot: Partial<{ tick: number; score: number; birdY: number }>, world = generateWorld(6977347407732442987n, { width: 480, height: 640 })) {
  await store.writeOrigin(create(GameOriginSchema, { gameId, owner: "mallory", world, bird: { width: 34, height: 24 }, createdAtMs: Date.now() }));
  await store.writeSnapshots("elsewhere", [
    create(GameSnapshotSchema, { gameId, engine: "elsewhere", phase: PlayState.PLAYING, tick: 10, birdY: 300, birdVelocity: 0, pipeSpeed: 2, pipeWindowX: 0, closestPipe: 0, score: 0, lastInputSeq: 1, reflectedSeq: 1, startedAtMs: Date.now(), ...snapshot }),
  ]);
}

describe("a game planted in the snapshot store", () => {
  it("with an impossible score, or a world the generator could not make, is refused by ResumeGame (data_loss)", async () => {
    const world = generateWorld(6977347407732442987n, { width: 480, height: 640 });
    await plant("honest", {});
    await plant("high-score", { tick: 12, score: 99 });
    await plant("huge-world", {}, { ...world, viewport: { width: 480, height: 640 }, pipes: Array.from({ length: 5000 }, () => ({ gapStart: 100, gapHeight: 150 })) } as typeof world);
    await plant("nan-bird", { birdY: Number.NaN });
    const outcomes: Record<string, string> = {};
    for (const id of ["honest", "high-score", "huge-world", "nan-bird"]) outcomes[id] = await outcome(resume(id));
    const held = ["honest", "high-score", "huge-world", "nan-bird"].filter((id) => m.server.mounted.games!.has(id));
    console.log(`ResumeGame of planted games: ${JSON.stringify(outcomes)}; in the engine now: ${held.join(", ")}`);
    expect(outcomes).toEqual({ honest: "ok", "high-score": "data_loss", "huge-world": "data_loss", "nan-bird": "data_loss" });
    expect(held).toEqual(["honest"]);
  });
});
