import { DEFAULT_BIRD } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import { DEFAULT_SURVIVAL_TICKS, FlapBot, PlanError, courseFor, planSurvival, simulateCourse, survivalFlapTicks } from "../src/index.js";

const EASY = 6977347407732442987n;
const HARD = 8525333463046388971n;

describe("planSurvival", () => {
  it("keeps the bird alive on the easy seed for 60 s, flapping about every 6 ticks, then lets it fall", () => {
    expect(DEFAULT_SURVIVAL_TICKS).toBe(1819);
    const plan = planSurvival(EASY);
    // The schedule the bench's games play: these figures are what its load is made of.
    expect(plan).toMatchObject({ seed: EASY, score: 36, ticks: 1927, died: true, courseEnd: false, marginPx: 0 });
    expect(plan.flapTicks).toHaveLength(332);
    expect(plan.flapTicks.slice(0, 8)).toEqual([39, 58, 59, 60, 75, 78, 87, 88]);
    expect(simulateCourse(plan.course, plan.flapTicks)).toEqual({ score: 36, ticks: 1927, died: true, courseEnd: false });
    expect(simulateCourse(plan.course, []).ticks).toBeLessThan(100);
    // Planned to minTicks + 60, no flap after that.
    expect(Math.max(...plan.flapTicks)).toBeLessThanOrEqual(DEFAULT_SURVIVAL_TICKS + 60);
  });

  it("plans other seeds and shorter games", () => {
    const hard = planSurvival(HARD);
    expect(hard.ticks).toBeGreaterThanOrEqual(DEFAULT_SURVIVAL_TICKS);
    expect(simulateCourse(hard.course, hard.flapTicks).ticks).toBe(hard.ticks);
    const short = planSurvival(HARD, { minTicks: 200 });
    expect(short.ticks).toBeGreaterThanOrEqual(200);
    expect(short.ticks).toBeLessThan(hard.ticks);
  });

  it("says at which tick no schedule survives", () => {
    expect(() => planSurvival(1n)).toThrow(PlanError);
    expect(() => planSurvival(1n)).toThrow("no flap schedule survives tick 686");
    expect(() => survivalFlapTicks(courseFor(1n), DEFAULT_BIRD, 700, 0)).toThrow("no flap schedule survives tick 686");
  });

  it("aims the end of the path at the next gap's centre plus the margin", () => {
    const course = courseFor(EASY);
    const centred = survivalFlapTicks(course, DEFAULT_BIRD, 300, 0, 3);
    const lower = survivalFlapTicks(course, DEFAULT_BIRD, 300, 10, 3);
    expect(centred).not.toEqual(lower);
    // The same search up to where the end point decides.
    expect(centred.slice(0, 17)).toEqual(lower.slice(0, 17));
  });

  it("rejects bad options", () => {
    expect(() => planSurvival(EASY, { minTicks: 0 })).toThrow(RangeError);
    expect(() => planSurvival(EASY, { minTicks: 1.5 })).toThrow(RangeError);
    expect(() => planSurvival(EASY, { marginPx: Number.NaN })).toThrow(RangeError);
    expect(() => planSurvival(EASY, { viewport: { width: 10, height: 10 } })).toThrow(RangeError);
  });
});

describe("FlapBot", () => {
  it("presses on the frame before each planned tick, and on no other", () => {
    const bot = new FlapBot([5, 3, 5, 9]);
    const pressed = Array.from({ length: 12 }, (_, frame) => frame).filter((frame) => bot.pressOnFrame(frame));
    expect(pressed).toEqual([2, 4, 8]);
    const planned = Array.from({ length: 12 }, (_, tick) => tick).filter((tick) => bot.flapsBefore(tick));
    expect(planned).toEqual([3, 5, 9]);
    expect(bot.pressOnFrame(1_000_000)).toBe(false);
    expect(new FlapBot([]).pressOnFrame(0)).toBe(false);
  });

  it("played frame by frame, reaches the simulator's outcome", () => {
    const plan = planSurvival(HARD, { minTicks: 400 });
    const bot = new FlapBot(plan.flapTicks);
    const pressedBefore: number[] = [];
    for (let frame = 1; frame < plan.ticks; frame++) if (bot.pressOnFrame(frame)) pressedBefore.push(frame + 1);
    expect(simulateCourse(plan.course, pressedBefore)).toEqual(simulateCourse(plan.course, plan.flapTicks));
  });

  it("rejects ticks that are not whole numbers ≥ 1", () => {
    expect(() => new FlapBot([0])).toThrow(RangeError);
    expect(() => new FlapBot([2.5])).toThrow(RangeError);
    expect(() => new FlapBot([Number.NaN])).toThrow(RangeError);
  });
});
