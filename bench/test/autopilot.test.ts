import { create } from "@bufbuild/protobuf";
import { RecordRunResponseSchema } from "@flaplab/contracts/score/v1/score_pb";
import { GameTable, SingleTimerClock, TickScheduler, createGameSessionHandler } from "@flaplab/engine";
import { TICK_MS } from "@flaplab/physics";
import { FlapBot, type SurvivalPlan, planSurvival, simulateCourse } from "@flaplab/simulator";
import { describe, expect, it } from "vitest";
import { type SendStats, benchPlayer, flappingSession, idleMusic, silentLogger } from "../src/engine-harness.js";
import { EASY_SEED } from "../src/seed.js";

const HARD_SEED = 8525333463046388971n;

/**
 * Plays `plan` on the engine's real game session handler with the bench's in-memory bot
 * (`flappingSession`), one tick period at a time on a manual clock, and returns the run the
 * engine records at game over, and how many messages it sent that were not a new tick's frame.
 */
async function playOnEngine(plan: SurvivalPlan): Promise<{ score: number; ticks: number; untimed: number }> {
  const clock = new SingleTimerClock();
  const scheduler = new TickScheduler({ clock });
  const games = new GameTable({ maxGames: 10, maxGamesPerPlayer: 10, idleTtlMs: 3600_000, sweepIntervalMs: 0 });
  const recorded: { score: number; ticks: number }[] = [];
  const handler = createGameSessionHandler({
    games,
    scheduler,
    music: idleMusic(),
    score: {
      recordRun: (req) => {
        recorded.push({ score: req.score ?? -1, ticks: req.ticks ?? -1 });
        return Promise.resolve(create(RecordRunResponseSchema, {}));
      },
      getScores: () => Promise.reject(new Error("not used")),
    },
    logger: silentLogger,
  });
  const player = benchPlayer();
  const game = games.create({ id: "g", owner: { username: player.username, token: player.token }, course: plan.course, seed: plan.seed });
  const stats: SendStats = { frames: 0, frameBytes: 0, acks: 0, ended: 0, endReasons: {} };
  const { session, start } = flappingSession("g", player, new FlapBot(plan.flapTicks), () => game.state.tick, stats);
  handler(session);
  start();
  const flush = () => new Promise((r) => setImmediate(r));
  // The bot's input for the next tick reaches the handler in a microtask: let it in before each tick.
  for (let t = 0; t < plan.ticks + 10 && !session.isClosed; t++) {
    await flush();
    clock.advance(TICK_MS);
  }
  for (let i = 0; i < 10 && recorded.length === 0; i++) await flush();
  scheduler.stop();
  expect(session.isClosed).toBe(true);
  expect(recorded).toHaveLength(1);
  return { ...(recorded[0] as { score: number; ticks: number }), untimed: stats.acks };
}

describe("the capacity benchmark's flap schedule", () => {
  it("keeps the bird alive on the easy seed for at least 60 s of ticks, as the simulator replays it", () => {
    const schedule = planSurvival(EASY_SEED);
    const outcome = simulateCourse(schedule.course, schedule.flapTicks);
    expect(outcome.ticks).toBe(schedule.ticks);
    expect(outcome.ticks).toBeGreaterThanOrEqual(Math.ceil(60_000 / 33));
    expect(schedule.flapTicks.length).toBeGreaterThan(100);
    // Without the flaps the bird falls into the first pipe long before that.
    expect(simulateCourse(schedule.course, []).ticks).toBeLessThan(100);
  });

  it.each([
    ["easy", EASY_SEED],
    ["hard", HARD_SEED],
    ["2026", 2026n],
  ])("played by the bench's bot on the engine, ends where the simulator says (%s seed)", { timeout: 30_000 }, async (_name, seed) => {
    const plan = planSurvival(seed);
    const simulated = simulateCourse(plan.course, plan.flapTicks);
    expect(plan.ticks).toBeGreaterThanOrEqual(Math.ceil(60_000 / 33));
    const run = await playOnEngine(plan);
    expect({ score: run.score, ticks: run.ticks }).toEqual({ score: simulated.score, ticks: simulated.ticks });
    // Every planned flap was pressed and applied: the engine sent one input ack per press, and
    // the game summary after the game-over frame (the bot counts both as messages without a new tick).
    expect(run.untimed).toBe(plan.flapTicks.filter((k) => k <= plan.ticks).length + 1);
  });
});
