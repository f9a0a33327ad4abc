import { join } from "node:path";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { describeContract } from "@flaplab/testkit";
import { afterAll, expect, it } from "vitest";
import { createScore, openScoreStore, scoreComponent, type ScoreStore } from "../src/index.js";

const stores: ScoreStore[] = [];

describeContract(
  {
    component: scoreComponent,
    caller: "engine",
    create: async (env) => {
      const store = await openScoreStore({ dataDir: join(env.dataDir, "score") });
      stores.push(store);
      return createScore({ store });
    },
  },
  (t) => {
    afterAll(async () => {
      for (const s of stores.splice(0)) await s.close();
    });

    it("records the caller's run and returns it", async () => {
      const before = Date.now();
      const { run } = await t.client.recordRun({ gameId: "alice-1", score: 7, ticks: 402, seed: 6977347407732442987n });
      expect(run).toMatchObject({ gameId: "alice-1", username: "alice", score: 7, ticks: 402, seed: 6977347407732442987n });
      expect(timestampMs(run!.finishedAt!)).toBeGreaterThanOrEqual(before);
      expect(timestampMs(run!.finishedAt!)).toBeLessThanOrEqual(Date.now());
    });

    it("returns only the caller's own runs, newest first", async () => {
      await t.client.recordRun({ gameId: "alice-2", score: 31, ticks: 1200, seed: 8525n });
      const bob = await t.as("bob");
      await bob.recordRun({ gameId: "bob-1", score: 12, ticks: 700, seed: 1n });

      const mine = await t.client.getScores({});
      expect(mine.ownRuns.map((r) => r.gameId)).toEqual(["alice-2", "alice-1"]);
      expect(mine.ownRuns.every((r) => r.username === "alice")).toBe(true);
      const his = await bob.getScores({});
      expect(his.ownRuns.map((r) => r.gameId)).toEqual(["bob-1"]);
    });

    it("serves the leaderboard by score, highest first", async () => {
      const carol = await t.as("carol");
      await carol.recordRun({ gameId: "carol-1", score: 31, ticks: 1300, seed: 2n });
      const { leaderboard } = await carol.getScores({ limit: 3 });
      // alice-2 and carol-1 tie on 31: the earlier finish ranks first.
      expect(leaderboard.map((r) => `${r.username}:${r.score}`)).toEqual(["alice:31", "carol:31", "bob:12"]);
      const all = await carol.getScores({ limit: 100 });
      expect(all.leaderboard.map((r) => r.gameId)).toEqual(["alice-2", "carol-1", "bob-1", "alice-1"]);
    });

    it("refuses a game id that is already recorded and keeps the first run", async () => {
      const bob = await t.as("bob");
      await expect(bob.recordRun({ gameId: "alice-1", score: 99_999, ticks: 5 })).rejects.toMatchObject({
        code: Code.AlreadyExists,
      });
      const { ownRuns } = await t.client.getScores({ limit: 100 });
      expect(ownRuns.find((r) => r.gameId === "alice-1")).toMatchObject({ username: "alice", score: 7, ticks: 402 });
      expect((await bob.getScores({})).ownRuns.map((r) => r.gameId)).toEqual(["bob-1"]);
    });

    it("rejects bad input as InvalidArgument", async () => {
      const bad = [
        { gameId: "", score: 1 },
        { gameId: "g".repeat(65), score: 1 },
        { gameId: "neg", score: -5 },
        { gameId: "huge", score: 100_001 },
        { gameId: "ticks", ticks: 4_000_000_000 },
      ];
      for (const req of bad) {
        await expect(t.client.recordRun(req)).rejects.toMatchObject({ code: Code.InvalidArgument });
      }
      await expect(t.client.getScores({ limit: 101 })).rejects.toMatchObject({ code: Code.InvalidArgument });
    });

    it("rejects calls without a token or with a bad one", async () => {
      await expect(t.clientAs(undefined).getScores({})).rejects.toMatchObject({ code: Code.Unauthenticated });
      await expect(t.clientAs(undefined).recordRun({ gameId: "anon-1", score: 1 })).rejects.toMatchObject({
        code: Code.Unauthenticated,
      });
      await expect(t.clientAs("garbage").getScores({})).rejects.toMatchObject({ code: Code.Unauthenticated });
      const { ownRuns } = await t.client.getScores({ limit: 100 });
      expect(ownRuns.some((r) => r.gameId === "anon-1")).toBe(false);
    });

    it("refuses RecordRun from a player's own token with PermissionDenied, and stores nothing", async () => {
      const player = t.clientAs(await t.token("mallory"));
      await expect(player.recordRun({ gameId: "forged-1", score: 100_000, ticks: 1 })).rejects.toMatchObject({
        code: Code.PermissionDenied,
      });
      // The same token may still read the scoreboard: GetScores is for players.
      const { leaderboard } = await player.getScores({ limit: 100 });
      expect(leaderboard.some((r) => r.gameId === "forged-1")).toBe(false);
    });

    it("refuses a component credential that names no player with InvalidArgument", async () => {
      const anonymous = t.clientAs(await t.serviceSigner.tokenFor("engine", "score", undefined));
      await expect(anonymous.recordRun({ gameId: "nobody-1", score: 1, ticks: 1 })).rejects.toMatchObject({
        code: Code.InvalidArgument,
      });
    });
  },
);
