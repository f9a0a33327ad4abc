import { simulateCourse } from "@flaplab/simulator";
import { describe, expect, it } from "vitest";
import { EASY_SEED, findFlapSchedule } from "../src/autopilot.js";

describe("the capacity benchmark's flap schedule", () => {
  it("keeps the bird alive on the easy seed for at least 60 s of ticks, as the simulator replays it", () => {
    const schedule = findFlapSchedule(EASY_SEED);
    const outcome = simulateCourse(schedule.course, schedule.flapTicks);
    expect(outcome.ticks).toBe(schedule.survivesTicks);
    expect(outcome.ticks).toBeGreaterThanOrEqual(Math.ceil(60_000 / 33));
    expect(schedule.flapTicks.length).toBeGreaterThan(100);
    // Without the flaps the bird falls into the first pipe long before that.
    expect(simulateCourse(schedule.course, []).ticks).toBeLessThan(100);
  });
});
