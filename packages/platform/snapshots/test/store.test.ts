import { create } from "@bufbuild/protobuf";
import { GameOriginSchema, GameSnapshotSchema } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import { freePort } from "@flaplab/ports";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemorySnapshotStore, openSnapshotStore, type RedisServer, RedisSnapshotStore, type SnapshotStore, startRedisServer } from "../src/index.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer({ port: await freePort() });
}, 20_000);
afterAll(async () => {
  await redis?.stop();
});

const origin = (gameId: string) =>
  create(GameOriginSchema, {
    gameId,
    owner: "alice",
    world: { seed: 42n, pipeSpacing: 180, viewport: { width: 480, height: 640 }, pipes: [{ gapStart: 100, gapHeight: 150 }] },
    bird: { width: 34, height: 24 },
    createdAtMs: 1000,
  });
const snapshot = (gameId: string, tick: number) =>
  create(GameSnapshotSchema, { gameId, engine: "engine-1", phase: PlayState.PLAYING, tick, birdY: 300.25, birdVelocity: -4.6, score: 2, lastInputSeq: 5 });

const stores: Array<[string, (ttlMs?: number) => Promise<SnapshotStore>]> = [
  ["memory", async (ttlMs) => new MemorySnapshotStore(Date.now, ttlMs === undefined ? {} : { ttlMs })],
  [
    "redis",
    async (ttlMs) => {
      const store = new RedisSnapshotStore({ url: redis.url, keyPrefix: `t${Math.random().toString(36).slice(2)}:`, ...(ttlMs === undefined ? {} : { ttlMs }) });
      await store.connect();
      return store;
    },
  ],
];

describe.each(stores)("%s snapshot store", (_kind, open) => {
  it("returns a game's origin and its latest snapshot, as written, and forgets removed games", async () => {
    const store = await open();
    expect(await store.read("g1")).toBeUndefined();
    await store.writeOrigin(origin("g1"));
    // An origin without a snapshot is not a game one can continue.
    expect(await store.read("g1")).toBeUndefined();
    expect(await store.writeSnapshots("engine-1", [snapshot("g1", 10), snapshot("g2", 3)])).toEqual([]);
    expect(await store.writeSnapshots("engine-1", [snapshot("g1", 11)])).toEqual([]);
    const got = await store.read("g1");
    expect(got?.origin.world?.pipes).toEqual([expect.objectContaining({ gapStart: 100, gapHeight: 150 })]);
    expect(got?.origin.owner).toBe("alice");
    expect(got?.snapshot).toMatchObject({ tick: 11, birdY: 300.25, birdVelocity: -4.6, score: 2, lastInputSeq: 5, phase: PlayState.PLAYING });
    await store.remove(["g1"]);
    expect(await store.read("g1")).toBeUndefined();
    await store.close();
  });

  it("keeps what was written, not the writer's message: a writer may reuse it, and a read is the store's at that moment", async () => {
    const store = await open();
    await store.writeOrigin(origin("g1"));
    const message = snapshot("g1", 10);
    await store.writeSnapshots("engine-1", [message]);
    // The engine's keeper rewrites its message in place for its next batch.
    message.tick = 11;
    message.birdY = 1.5;
    const first = await store.read("g1");
    expect(first?.snapshot).toMatchObject({ tick: 10, birdY: 300.25 });
    await store.writeSnapshots("engine-1", [message]);
    expect((await store.read("g1"))?.snapshot).toMatchObject({ tick: 11, birdY: 1.5 });
    // What was read before the second write is unchanged.
    expect(first?.snapshot).toMatchObject({ tick: 10, birdY: 300.25 });
    // And changing what was read changes nothing kept.
    first!.snapshot.tick = 99;
    expect((await store.read("g1"))?.snapshot.tick).toBe(11);
    await store.close();
  });

  it("keeps a game's origin as written: changing the writer's message or a read one changes nothing kept", async () => {
    const store = await open();
    const written = origin("g1");
    await store.writeOrigin(written);
    await store.writeSnapshots("engine-1", [snapshot("g1", 1)]);
    written.owner = "mallory";
    written.world!.pipes[0]!.gapStart = 0;
    const read = await store.read("g1");
    expect(read?.origin).toMatchObject({ owner: "alice", world: { pipes: [{ gapStart: 100, gapHeight: 150 }] } });
    read!.origin.world!.pipes.push(read!.origin.world!.pipes[0]!);
    expect((await store.read("g1"))?.origin.world?.pipes).toHaveLength(1);
    await store.close();
  });

  it("writes a game's snapshots for its owner only: the first writer, or the last to claim it", async () => {
    const store = await open();
    await store.writeOrigin(origin("g1"));
    expect(await store.writeSnapshots("engine-1", [snapshot("g1", 5), snapshot("g2", 5)])).toEqual([]);
    // engine-2 continues g1 (it resumed it): engine-1's later writes of g1 are refused, g2's are not.
    await store.claim("g1", "engine-2");
    expect(await store.writeSnapshots("engine-1", [snapshot("g1", 6), snapshot("g2", 6)])).toEqual(["g1"]);
    expect((await store.read("g1"))?.snapshot.tick).toBe(5);
    expect(await store.writeSnapshots("engine-2", [snapshot("g1", 7)])).toEqual([]);
    expect((await store.read("g1"))?.snapshot.tick).toBe(7);
    // A removed game has no owner: whoever writes it next owns it.
    await store.remove(["g1"]);
    expect(await store.writeSnapshots("engine-1", [snapshot("g1", 1)])).toEqual([]);
    await store.close();
  });

  it("forgets a game its time to live after its latest write (abandoned games do not pile up), and a write keeps it", async () => {
    const ttlMs = 400;
    const store = await open(ttlMs);
    await store.writeOrigin(origin("kept"));
    await store.writeOrigin(origin("abandoned"));
    await store.writeSnapshots("engine-1", [snapshot("kept", 1), snapshot("abandoned", 1)]);
    // "kept" is written again and claimed within its time to live; "abandoned" is not.
    const deadline = Date.now() + 5000;
    for (let tick = 2; Date.now() < deadline && (await store.read("abandoned")) !== undefined; tick++) {
      await new Promise((r) => setTimeout(r, 100));
      await store.writeSnapshots("engine-1", [snapshot("kept", tick)]);
      if (tick === 4) await store.claim("kept", "engine-1");
    }
    expect(await store.read("abandoned")).toBeUndefined();
    const kept = await store.read("kept");
    expect(kept?.origin.owner).toBe("alice");
    expect(kept?.snapshot.tick).toBeGreaterThan(2);
    if (store instanceof MemorySnapshotStore) {
      // Purged from memory by a later write, not only hidden from reads.
      await new Promise((r) => setTimeout(r, ttlMs + 50));
      await store.writeSnapshots("engine-1", [snapshot("kept", 100)]);
      expect(store.size).toBe(1);
    }
    await store.close();
  });

  it("lists engines whose heartbeat has not expired, and none that retired", async () => {
    const store = await open();
    await store.heartbeat({ engine: "engine-1", games: 3, maxGames: 10, draining: false }, 60_000);
    await store.heartbeat({ engine: "engine-2", games: 0, maxGames: 10, draining: true }, 60_000);
    await store.heartbeat({ engine: "engine-3", games: 0, maxGames: 10, draining: false }, 150);
    expect((await store.liveEngines()).map((b) => b.engine).sort()).toEqual(["engine-1", "engine-2", "engine-3"]);
    await new Promise((r) => setTimeout(r, 300));
    const live = await store.liveEngines();
    expect(live.map((b) => b.engine).sort()).toEqual(["engine-1", "engine-2"]);
    expect(live.find((b) => b.engine === "engine-2")).toEqual({ engine: "engine-2", games: 0, maxGames: 10, draining: true });
    await store.retire("engine-1");
    expect((await store.liveEngines()).map((b) => b.engine)).toEqual(["engine-2"]);
    await store.close();
  });
});

describe("redis snapshot store", () => {
  it("writes a batch of 500 snapshots in one pipeline", async () => {
    const store = new RedisSnapshotStore({ url: redis.url, keyPrefix: "batch:" });
    await store.connect();
    const batch = Array.from({ length: 500 }, (_, i) => snapshot(`g${i}`, i));
    expect(await store.writeSnapshots("engine-1", batch)).toEqual([]);
    for (const i of [0, 250, 499]) await store.writeOrigin(origin(`g${i}`));
    expect((await store.read("g499"))?.snapshot.tick).toBe(499);
    expect((await store.read("g250"))?.snapshot.tick).toBe(250);
    await store.close();
  });

  it("fails a write at once, with the reason, when the server is down", async () => {
    const port = await freePort();
    const store = new RedisSnapshotStore({ url: `redis://127.0.0.1:${port}`, onError: () => undefined });
    await expect(store.connect()).rejects.toThrow(/ECONNREFUSED/);
    await expect(store.writeSnapshots("engine-1", [snapshot("g1", 1)])).rejects.toThrow();
    await store.close();
  });
});

describe("startRedisServer", () => {
  it("says how to install Redis when the binary is missing", async () => {
    await expect(startRedisServer({ port: await freePort(), bin: "no-such-redis-server" })).rejects.toThrow(/not found: install Redis/);
  });
});

describe("openSnapshotStore", () => {
  it("opens the store FLAPLAB_SNAPSHOT_STORE names, in process by default for one engine", async () => {
    expect((await openSnapshotStore({}, { engines: 1, topology: "t" })).kind).toBe("memory");
    const store = await openSnapshotStore({ FLAPLAB_SNAPSHOT_STORE: redis.url }, { engines: 3, topology: "t" });
    expect(store.kind).toBe("redis");
    await store.close();
  });

  it("refuses several engines without a shared store, and a value that is not a store", async () => {
    await expect(openSnapshotStore({}, { engines: 3, topology: "sharded" })).rejects.toThrow(/sharded runs 3 engines.*FLAPLAB_SNAPSHOT_STORE=redis:\/\//);
    await expect(openSnapshotStore({ FLAPLAB_SNAPSHOT_STORE: "postgres://x" }, { engines: 1, topology: "t" })).rejects.toThrow(/must be "memory" or a redis:\/\/ URL/);
    await expect(openSnapshotStore({ FLAPLAB_SNAPSHOT_TTL_MS: "soon" }, { engines: 1, topology: "t" })).rejects.toThrow(/FLAPLAB_SNAPSHOT_TTL_MS must be a whole number ≥ 1, got "soon"/);
    const store = await openSnapshotStore({ FLAPLAB_SNAPSHOT_TTL_MS: "1234" }, { engines: 1, topology: "t" });
    expect((store as MemorySnapshotStore).ttlMs).toBe(1234);
  });
});
