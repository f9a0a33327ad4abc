import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { recordPendingRun } from "../src/index.js";
import { fakeScore } from "./fakes.js";

const run = { gameId: "g1", score: 7, ticks: 402, seed: "6977347407732442987", player: "alice" };

describe("recordPendingRun", () => {
  it("records the run for its player, with the seed as a number", async () => {
    const score = fakeScore();
    expect(await recordPendingRun(score.client, run)).toBe("delivered");
    expect(score.calls[0]!.request).toMatchObject({ gameId: "g1", score: 7, ticks: 402, seed: 6977347407732442987n });
    expect(score.calls[0]!.call).toMatchObject({ component: "engine", verb: "Outbox", gameId: "g1", principal: { username: "alice" } });
  });

  it("records it in the game's trace when the run kept one, and in none otherwise", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const score = fakeScore();
    await recordPendingRun(score.client, { ...run, traceparent });
    await recordPendingRun(score.client, run);
    expect(score.calls.map((c) => c.call?.traceparent)).toEqual([traceparent, undefined]);
  });

  it("counts AlreadyExists as delivered, refuses what the score component refuses, and throws to retry otherwise", async () => {
    const answer = (code: Code) => fakeScore(() => Promise.reject(new ConnectError("x", code))).client;
    expect(await recordPendingRun(answer(Code.AlreadyExists), run)).toBe("delivered");
    expect(await recordPendingRun(answer(Code.InvalidArgument), run)).toBe("refused");
    await expect(recordPendingRun(answer(Code.Unavailable), run)).rejects.toMatchObject({ code: Code.Unavailable });
    await expect(recordPendingRun(answer(Code.DeadlineExceeded), run)).rejects.toMatchObject({ code: Code.DeadlineExceeded });
  });
});
