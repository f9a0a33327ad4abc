import { Code, ConnectError } from "@connectrpc/connect";
import type { CallContext } from "@flaplab/component";
import { describe, expect, it } from "vitest";
import { type Game, GameTable, type PendingRun, courseOf } from "../src/index.js";
import { RunRecorder } from "../src/run-recorder.js";
import { fakeScore, memoryLogger, principal } from "./fakes.js";
import { EASY_SEED, easyWorld } from "./fixtures.js";

const alice = principal("alice");
const call: CallContext = { component: "engine", verb: "Tick", principal: alice, gameId: "g1" };

/** A game of alice's standing at tick 0, score 0, with the easy world's seed. */
function game(): Game {
  const games = new GameTable({ sweepIntervalMs: 0 });
  return games.create({ id: "g1", owner: alice, course: courseOf(easyWorld()), seed: EASY_SEED, traceparent: "00-trace-01" });
}

function recorder(score: ReturnType<typeof fakeScore>, extra: { outbox?: { add(run: PendingRun): void }; delays?: number[] } = {}) {
  const logger = memoryLogger();
  const slept: number[] = [];
  const runs = new RunRecorder({
    score: score.client,
    logger,
    retryDelaysMs: [10, 20],
    timeoutMs: 1234,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
    outbox: extra.outbox,
  });
  return { runs, logger, slept };
}

const failing = (code: Code, times = Number.POSITIVE_INFINITY) =>
  fakeScore((_req, attempt) => (attempt <= times ? Promise.reject(new ConnectError("nope", code)) : Promise.resolve()));

describe("RunRecorder", () => {
  it("records a run in one call, in the game's call context, with the attempt's deadline", async () => {
    const score = fakeScore();
    const { runs, slept } = recorder(score);
    expect(await runs.record(game(), call)).toEqual({ recorded: true, error: "", pending: false });
    expect(score.calls).toHaveLength(1);
    expect(score.calls[0]!.request).toMatchObject({ gameId: "g1", score: 0, ticks: 0, seed: EASY_SEED });
    expect(score.calls[0]!.call).toMatchObject({ component: "engine", verb: "Tick", gameId: "g1" });
    expect(score.calls[0]!.options?.timeoutMs).toBe(1234);
    expect(slept).toEqual([]);
  });

  it("retries after each delay while Unavailable, and records when the score component is back", async () => {
    const score = failing(Code.Unavailable, 2);
    const { runs, slept, logger } = recorder(score);
    expect(await runs.record(game(), call)).toEqual({ recorded: true, error: "", pending: false });
    expect(score.calls).toHaveLength(3);
    expect(slept).toEqual([10, 20]);
    expect(logger.lines.filter((l) => l.msg === "RecordRun unavailable, retrying")).toHaveLength(2);
  });

  it("gives up after the last delay, and does not retry a refusal", async () => {
    const down = failing(Code.Unavailable);
    const a = recorder(down);
    expect(await a.runs.record(game(), call)).toEqual({ recorded: false, error: "[unavailable] nope", pending: false });
    expect(down.calls).toHaveLength(3);
    const refused = failing(Code.PermissionDenied);
    const b = recorder(refused);
    expect(await b.runs.record(game(), call)).toEqual({ recorded: false, error: "[permission_denied] nope", pending: false });
    expect(refused.calls).toHaveLength(1);
    expect(b.slept).toEqual([]);
  });

  it("counts an AlreadyExists on a retry as recorded, but not on the first attempt", async () => {
    const retried = fakeScore((_req, attempt) =>
      Promise.reject(new ConnectError("x", attempt === 1 ? Code.Unavailable : Code.AlreadyExists)),
    );
    expect(await recorder(retried).runs.record(game(), call)).toEqual({ recorded: true, error: "", pending: false });
    const first = failing(Code.AlreadyExists);
    expect(await recorder(first).runs.record(game(), call)).toMatchObject({ recorded: false, pending: false });
  });

  it("keeps a run the score component could not take in the outbox (pending), never a refused one", async () => {
    const kept: PendingRun[] = [];
    const outbox = { add: (run: PendingRun) => void kept.push(run) };
    const down = recorder(failing(Code.Unavailable), { outbox });
    expect(await down.runs.record(game(), call)).toEqual({ recorded: false, error: "[unavailable] nope", pending: true });
    expect(kept).toEqual([{ gameId: "g1", score: 0, ticks: 0, seed: EASY_SEED.toString(), player: "alice", traceparent: "00-trace-01" }]);
    expect(down.logger.lines.some((l) => (l.obj as { event?: string }).event === "run-pending")).toBe(true);
    const refused = recorder(failing(Code.InvalidArgument), { outbox });
    expect(await refused.runs.record(game(), call)).toMatchObject({ recorded: false, pending: false });
    expect(kept).toHaveLength(1);
  });

  it("says a run is lost when even the outbox cannot keep it", async () => {
    const outbox = {
      add: () => {
        throw new Error("disk full");
      },
    };
    const { runs, logger } = recorder(failing(Code.DeadlineExceeded), { outbox });
    expect(await runs.record(game(), call)).toEqual({ recorded: false, error: "[deadline_exceeded] nope", pending: false });
    expect(logger.lines.at(-1)).toMatchObject({ level: "error", obj: { gameId: "g1", err: "disk full" } });
  });
});
