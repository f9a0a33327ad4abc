import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { RecordRunRequestSchema } from "@flaplab/contracts/score/v1/score_pb";
import { beforeEach, describe, expect, it } from "vitest";
import { createScore, scoreComponent, StoreUnavailableError, type ScoreStore } from "../src/index.js";
import { ctxAs, expectCode, record, scores } from "./helpers.js";
import { describeEachStore } from "./stores.js";

const summary = (runs: { gameId: string; username: string; score: number }[]) =>
  runs.map((r) => `${r.username}:${r.gameId}:${r.score}`);

it("defines the score component with no public methods", () => {
  expect(scoreComponent.name).toBe("score");
  expect(scoreComponent.publicMethods).toEqual([]);
});

it("answers Unavailable while the store's database cannot be reached", async () => {
  const down = async (): Promise<never> => {
    throw new StoreUnavailableError("the score database is unavailable (ECONNREFUSED)");
  };
  const store: ScoreStore = { insertRun: down, getRun: down, ownRuns: down, leaderboard: down, close: async () => undefined };
  const impl = createScore({ store });
  await expectCode(record(impl, "alice", { gameId: "g1" }), Code.Unavailable, /score database is unavailable \(ECONNREFUSED\)/);
  await expectCode(scores(impl, "alice"), Code.Unavailable, /unavailable/);
});

it("does not disguise other store failures as Unavailable", async () => {
  const broken = async (): Promise<never> => {
    throw new Error("disk I/O error");
  };
  const store: ScoreStore = { insertRun: broken, getRun: broken, ownRuns: broken, leaderboard: broken, close: async () => undefined };
  await expect(record(createScore({ store }), "alice", { gameId: "g1" })).rejects.toThrow("disk I/O error");
});

describeEachStore((stores) => {
  let store: ScoreStore;
  let clock: number;
  let impl: ReturnType<typeof createScore>;

  beforeEach(async () => {
    store = await stores.open();
    clock = Date.UTC(2030, 0, 1);
    impl = createScore({ store, clock: () => clock });
  });

  describe("RecordRun", () => {
    it("stores the caller's run and returns it with the finish time", async () => {
      const run = await record(impl, "alice", { gameId: "g1", score: 31, ticks: 1234, seed: -6977347407732442987n });
      expect(run).toMatchObject({ gameId: "g1", username: "alice", score: 31, ticks: 1234, seed: -6977347407732442987n });
      expect(timestampMs(run.finishedAt!)).toBe(clock);
      expect(await store.getRun("g1")).toEqual({
        gameId: "g1",
        username: "alice",
        score: 31,
        ticks: 1234,
        seed: -6977347407732442987n,
        finishedAt: clock,
      });
    });

    it("keeps int64 seeds exactly", async () => {
      const seeds = [9223372036854775807n, -9223372036854775808n, 0n, 6977347407732442987n];
      for (const [i, seed] of seeds.entries()) await record(impl, "alice", { gameId: `s${i}`, seed });
      expect(await Promise.all(seeds.map(async (_, i) => (await store.getRun(`s${i}`))?.seed))).toEqual(seeds);
    });

    it("refuses a second run with the same game id and leaves the first unchanged", async () => {
      await record(impl, "alice", { gameId: "dup", score: 5, ticks: 100 });
      const before = await store.getRun("dup");
      clock += 1000;
      await expectCode(record(impl, "alice", { gameId: "dup", score: 99, ticks: 999 }), Code.AlreadyExists, /dup/);
      await expectCode(record(impl, "bob", { gameId: "dup", score: 99, ticks: 999 }), Code.AlreadyExists);
      expect(await store.getRun("dup")).toEqual(before);
    });

    it("validates game id, score and ticks", async () => {
      await expectCode(record(impl, "alice", { gameId: "", score: 1 }), Code.InvalidArgument, /game_id is required/);
      await expectCode(record(impl, "alice", { gameId: "x".repeat(65) }), Code.InvalidArgument, /at most 64/);
      await expectCode(record(impl, "alice", { gameId: "neg", score: -1 }), Code.InvalidArgument, /score must be between 0 and 100000/);
      await expectCode(record(impl, "alice", { gameId: "big", score: 100_001 }), Code.InvalidArgument, /score/);
      await expectCode(record(impl, "alice", { gameId: "ticks", ticks: 10_000_001 }), Code.InvalidArgument, /ticks/);
      expect(await store.leaderboard(100)).toEqual([]);
      await record(impl, "alice", { gameId: "x".repeat(64), score: 100_000, ticks: 10_000_000 });
      await record(impl, "alice", { gameId: "zero", score: 0, ticks: 0 });
      expect(await store.leaderboard(100)).toHaveLength(2);
    });

    it("needs a principal", async () => {
      const call = async () => impl.recordRun(create(RecordRunRequestSchema, { gameId: "g" }), ctxAs(undefined, "RecordRun"));
      await expect(call()).rejects.toBeInstanceOf(ConnectError);
      await expectCode(call(), Code.Unauthenticated);
    });
  });

  describe("GetScores", () => {
    it("returns only the caller's runs, newest first", async () => {
      for (const [user, id, score] of [
        ["alice", "a1", 3],
        ["bob", "b1", 50],
        ["alice", "a2", 9],
        ["alice", "a3", 1],
      ] as const) {
        clock += 1000;
        await record(impl, user, { gameId: id, score });
      }
      expect(summary((await scores(impl, "alice")).ownRuns)).toEqual(["alice:a3:1", "alice:a2:9", "alice:a1:3"]);
      expect(summary((await scores(impl, "bob")).ownRuns)).toEqual(["bob:b1:50"]);
      expect((await scores(impl, "carol")).ownRuns).toEqual([]);
    });

    it("orders own runs finished in the same millisecond by insertion, newest first", async () => {
      for (const id of ["t1", "t2", "t3"]) await record(impl, "alice", { gameId: id });
      expect((await scores(impl, "alice")).ownRuns.map((r) => r.gameId)).toEqual(["t3", "t2", "t1"]);
    });

    it("ranks the true top N by score, then earliest finish", async () => {
      // A heap's level order would not give this; the leaderboard must be fully sorted.
      const input: [string, number][] = [
        ["u1", 7], ["u2", 31], ["u3", 12], ["u4", 31], ["u5", 2], ["u6", 30], ["u7", 12], ["u8", 29], ["u9", 0], ["u10", 31],
      ];
      for (const [i, [user, score]] of input.entries()) {
        clock += 1000;
        await record(impl, user, { gameId: `g${i}`, score });
      }
      const board = (await scores(impl, "u1", 5)).leaderboard;
      expect(summary(board)).toEqual(["u2:g1:31", "u4:g3:31", "u10:g9:31", "u6:g5:30", "u8:g7:29"]);
      const full = (await scores(impl, "u1", 100)).leaderboard.map((r) => r.score);
      expect(full).toEqual([...input.map(([, s]) => s)].sort((a, b) => b - a));
    });

    it("defaults the limit to 10, caps at 100, and refuses more", async () => {
      for (let i = 0; i < 120; i++) {
        clock += 1;
        await record(impl, i % 2 ? "alice" : "bob", { gameId: `r${i}`, score: i });
      }
      const def = await scores(impl, "alice");
      expect(def.ownRuns).toHaveLength(10);
      expect(def.leaderboard).toHaveLength(10);
      expect(def.leaderboard[0]!.score).toBe(119);
      expect((await scores(impl, "alice", 3)).leaderboard.map((r) => r.score)).toEqual([119, 118, 117]);
      const max = await scores(impl, "alice", 100);
      expect(max.ownRuns).toHaveLength(60);
      expect(max.leaderboard).toHaveLength(100);
      await expectCode(scores(impl, "alice", 101), Code.InvalidArgument, /limit must be at most 100/);
    });
  });

  describe("the store", () => {
    it("keeps runs across a close and reopen", async () => {
      await record(impl, "alice", { gameId: "keep-1", score: 7, ticks: 402, seed: 6977347407732442987n });
      clock += 1000;
      await record(impl, "bob", { gameId: "keep-2", score: 31, ticks: 900, seed: 8525n });
      await store.close();
      await store.close(); // closing twice is harmless

      const second = await stores.open();
      expect(await second.getRun("keep-1")).toEqual({
        gameId: "keep-1",
        username: "alice",
        score: 7,
        ticks: 402,
        seed: 6977347407732442987n,
        finishedAt: Date.UTC(2030, 0, 1),
      });
      expect((await second.leaderboard(10)).map((r) => r.gameId)).toEqual(["keep-2", "keep-1"]);
      expect((await second.ownRuns("alice", 10)).map((r) => r.gameId)).toEqual(["keep-1"]);
      expect(await second.insertRun({ gameId: "keep-1", username: "x", score: 1, ticks: 1, seed: 1n, finishedAt: 2 })).toBe(false);
      expect(await second.getRun("missing")).toBeUndefined();
    });

    it("stores a game id once when inserts race", async () => {
      const run = { gameId: "race", username: "alice", score: 1, ticks: 1, seed: 1n, finishedAt: 1 };
      const results = await Promise.all([1, 2, 3].map((score) => store.insertRun({ ...run, score })));
      expect(results.filter((ok) => ok)).toHaveLength(1);
      expect(await store.leaderboard(10)).toHaveLength(1);
    });
  });
});
