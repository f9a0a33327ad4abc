import { create } from "@bufbuild/protobuf";
import { GameOriginSchema, GameSnapshotSchema } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { MemorySnapshotStore } from "@flaplab/snapshots";
import { describe, expect, it } from "vitest";
import { answerStoreCall, GroupSnapshotStore } from "../src/group-store.js";
import type { StoreCall } from "../src/protocol.js";

const origin = (gameId: string) =>
  create(GameOriginSchema, { gameId, owner: "ada", world: { seed: 7n, pipeSpacing: 191, viewport: { width: 480, height: 640 }, pipes: [{ gapStart: 100, gapHeight: 150 }] }, bird: { width: 34, height: 24 } });
const snapshot = (gameId: string, tick: number) => create(GameSnapshotSchema, { gameId, engine: "engine-1", tick, birdY: 201.5, score: 0 });

/** A shard's store wired to a group's store by a channel that delivers (or, closed, refuses) every call. */
function wired(group: MemorySnapshotStore) {
  let open = true;
  const sent: StoreCall[] = [];
  const shard: GroupSnapshotStore = new GroupSnapshotStore((call) => {
    if (!open) return false;
    sent.push(call);
    void answerStoreCall(group, call).then((result) => shard.settle(result));
    return true;
  });
  return { shard, sent, close: () => (open = false) };
}

describe("the group's in-process store, from a shard", () => {
  it("writes origins, snapshot batches and removals through the group, and says which games another engine owns", async () => {
    const group = new MemorySnapshotStore();
    const { shard, sent } = wired(group);
    await shard.writeOrigin(origin("g-1"));
    expect(await shard.writeSnapshots("engine-1", [snapshot("g-1", 12)])).toEqual([]);
    expect(await group.read("g-1")).toMatchObject({ origin: { gameId: "g-1", owner: "ada", world: { seed: 7n } }, snapshot: { tick: 12, birdY: 201.5, engine: "engine-1" } });
    await group.claim("g-1", "engine-2");
    expect(await shard.writeSnapshots("engine-1", [snapshot("g-1", 13)])).toEqual(["g-1"]);
    expect((await group.read("g-1"))!.snapshot.tick).toBe(12);
    await shard.remove(["g-1"]);
    expect(await group.read("g-1")).toBeUndefined();
    expect(sent.map((c) => c.method)).toEqual(["writeOrigin", "writeSnapshots", "writeSnapshots", "remove"]);
    expect(shard.waiting).toBe(0);
  });

  it("fails the calls waiting for a group that is gone, and every later one, at once", async () => {
    const waiting: StoreCall[] = [];
    const shard = new GroupSnapshotStore((call) => waiting.push(call) > 0);
    const write = shard.writeSnapshots("engine-1", [snapshot("g-2", 3)]);
    expect(shard.waiting).toBe(1);
    shard.disconnected();
    await expect(write).rejects.toThrow(/group is gone/);
    await expect(shard.writeOrigin(origin("g-2"))).rejects.toThrow(/group is gone/);
    expect(waiting).toHaveLength(1);
    // A channel that refuses a send fails the call too.
    const { shard: refused, close } = wired(new MemorySnapshotStore());
    close();
    await expect(refused.remove(["g-2"])).rejects.toThrow(/group is gone/);
  });

  it("refuses what only the group does: resuming games and beating the engine's heartbeat", async () => {
    const { shard } = wired(new MemorySnapshotStore());
    await expect(shard.read()).rejects.toThrow(/does not read games: its group does/);
    await expect(shard.claim()).rejects.toThrow(/does not claim games/);
    await expect(shard.heartbeat()).rejects.toThrow(/does not beat/);
    await expect(shard.liveEngines()).rejects.toThrow(/does not read heartbeats/);
    await expect(shard.retire()).rejects.toThrow(/does not retire/);
  });

  it("answers a call the group's store cannot make with its error (a bad message, a failing store)", async () => {
    const bad = await answerStoreCall(new MemorySnapshotStore(), { type: "store", id: 4, method: "writeOrigin", origin: new Uint8Array([0xff, 0xff, 0xff]) });
    expect(bad).toMatchObject({ type: "store-result", id: 4, error: expect.any(String) });
    const failing = new MemorySnapshotStore();
    failing.remove = () => Promise.reject(new Error("disk on fire"));
    expect(await answerStoreCall(failing, { type: "store", id: 5, method: "remove", gameIds: ["g"] })).toEqual({ type: "store-result", id: 5, error: "disk on fire" });
    const shard = new GroupSnapshotStore(() => true);
    const pending = shard.remove(["g"]);
    expect(shard.settle({ type: "store-result", id: 1, error: "disk on fire" })).toBe(true);
    await expect(pending).rejects.toThrow("the group's snapshot store failed: disk on fire");
    expect(shard.settle({ type: "store-result", id: 1 })).toBe(false);
  });
});
