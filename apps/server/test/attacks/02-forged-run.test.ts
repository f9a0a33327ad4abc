// Attack: a logged-in player calls ScoreService.RecordRun directly for a game id they made up,
// with score 100000, hoping to top the leaderboard. RecordRun is internal: only the engine, with a
// component credential, records runs (from its own game table).
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { describe, expect, it } from "vitest";
import { monolithWithPlayer, outcome } from "./credentials-harness.js";

const t = monolithWithPlayer();

describe("a player forging a run", () => {
  it("is refused with permission_denied in Connect and gRPC, and the leaderboard stays clean", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const score = t.m.client(ScoreService, protocol, { authorization: `Bearer ${t.token}` });
      const forged = score.recordRun({ gameId: `forged-${protocol}`, score: 100_000, ticks: 3, seed: 1n });
      expect(await outcome(forged)).toBe("permission_denied");
    }
    const { leaderboard, ownRuns } = await t.m.client(ScoreService, "connect", { authorization: `Bearer ${t.token}` }).getScores({ limit: 100 });
    expect(leaderboard).toEqual([]);
    expect(ownRuns).toEqual([]);
  });

  it("is refused over plain JSON too, with a message that says the method is internal", async () => {
    const res = await fetch(`${t.m.baseUrl}/flaplab.score.v1.ScoreService/RecordRun`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.token}` },
      body: JSON.stringify({ gameId: "forged-json", score: 100000, ticks: 3 }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("permission_denied");
    expect(body.message).toMatch(/internal: only components may call it/);
  });
});
