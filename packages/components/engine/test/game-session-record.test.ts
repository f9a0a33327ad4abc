import { Code, ConnectError } from "@connectrpc/connect";
import { CloseCode } from "@flaplab/game-protocol";
import { describe, expect, it } from "vitest";
import type { PendingRun } from "../src/index.js";
import { fakeScore } from "./fakes.js";
import { deadlyWorld } from "./fixtures.js";
import { alice, setup, summaryOf, start, tick } from "./stream-harness.js";

describe("game stream: RecordRun", () => {
  it("retries RecordRun on Unavailable, then sends the summary", async () => {
    const delays: number[] = [];
    const score = fakeScore((_req, attempt) =>
      attempt < 3 ? Promise.reject(new ConnectError("score down", Code.Unavailable)) : Promise.resolve(),
    );
    const s = setup({
      score,
      recordRetryDelaysMs: [10, 20, 30],
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
    });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!session.isClosed) await tick(s);
    expect(score.calls).toHaveLength(3);
    expect(delays).toEqual([10, 20]);
    expect(score.calls.every((c) => c.call?.principal?.token === alice.token)).toBe(true);
    expect(summaryOf(session)).toMatchObject({ recorded: true, recordError: "" });
    expect(session.end?.code).toBe(CloseCode.Normal);
  });

  it("reports a run the score component refused, and gives up after the retries", async () => {
    for (const [code, calls, error] of [
      [Code.PermissionDenied, 1, "[permission_denied] nope"],
      [Code.Unavailable, 4, "[unavailable] nope"],
    ] as const) {
      const score = fakeScore(() => Promise.reject(new ConnectError("nope", code)));
      const s = setup({ score });
      s.addGame("g1", deadlyWorld());
      const session = s.connect("g1");
      await start(session);
      while (!session.isClosed) await tick(s);
      expect(score.calls).toHaveLength(calls);
      const summary = summaryOf(session);
      expect(summary?.recorded).toBe(false);
      expect(summary?.recordError).toBe(error);
      expect(session.end).toMatchObject({ code: CloseCode.Normal, reason: "game over" });
    }
  });

  it("keeps a run the score component could not take in the outbox, and says it is pending; a refused run is not kept", async () => {
    for (const [code, pending] of [
      [Code.Unavailable, true],
      [Code.DeadlineExceeded, true],
      [Code.PermissionDenied, false],
    ] as const) {
      const kept: PendingRun[] = [];
      const score = fakeScore(() => Promise.reject(new ConnectError("nope", code)));
      const s = setup({ score, outbox: { add: (run) => void kept.push(run) } });
      s.addGame("g1", deadlyWorld());
      const session = s.connect("g1");
      await start(session);
      while (!session.isClosed) await tick(s);
      const summary = summaryOf(session)!;
      expect({ recorded: summary.recorded, recordPending: summary.recordPending }).toEqual({ recorded: false, recordPending: pending });
      expect(kept).toEqual(pending ? [{ gameId: "g1", score: summary.score, ticks: summary.ticks, seed: deadlyWorld().seed.toString(), player: "alice" }] : []);
    }
  });

  it("says a run is lost when even the outbox cannot keep it", async () => {
    const score = fakeScore(() => Promise.reject(new ConnectError("down", Code.Unavailable)));
    const s = setup({
      score,
      outbox: {
        add: () => {
          throw new Error("disk full");
        },
      },
    });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!session.isClosed) await tick(s);
    expect(summaryOf(session)).toMatchObject({ recorded: false, recordPending: false, recordError: "[unavailable] down" });
    expect(s.logger.lines).toContainEqual(expect.objectContaining({ level: "error", msg: "run could not be kept in the outbox: lost" }));
  });

  it("counts an AlreadyExists after a lost attempt as recorded", async () => {
    const score = fakeScore((_req, attempt) =>
      Promise.reject(new ConnectError("x", attempt === 1 ? Code.Unavailable : Code.AlreadyExists)),
    );
    const s = setup({ score });
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    while (!session.isClosed) await tick(s);
    expect(summaryOf(session)?.recorded).toBe(true);
  });

});
