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

  it("counts AlreadyExists as delivered, refuses what the score component refuses, and throws to retry otherwise", async () => {
    const answer = (code: Code) => fakeScore(() => Promise.reject(new ConnectError("x", code))).client;
    expect(await recordPendingRun(answer(Code.AlreadyExists), run)).toBe("delivered");
    expect(await recordPendingRun(answer(Code.InvalidArgument), run)).toBe("refused");
    await expect(recordPendingRun(answer(Code.Unavailable), run)).rejects.toMatchObject({ code: Code.Unavailable });
    await expect(recordPendingRun(answer(Code.DeadlineExceeded), run)).rejects.toMatchObject({ code: Code.DeadlineExceeded });
  });
});
