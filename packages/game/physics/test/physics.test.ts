import { describe, expect, it } from "vitest";
import {
  type BirdBox,
  type Course,
  DEFAULT_BIRD,
  DEFAULT_VIEWPORT,
  FLAP_VELOCITY,
  GRAVITY,
  type GameState,
  MAX_PIPE_SPEED,
  applyInput,
  applyInputInPlace,
  cloneGame,
  createGame,
  pipesInView,
  snapshotCourse,
  step,
  stepInPlace,
  tickInPlace,
  validateCourse,
  viewOf,
} from "../src/index.js";
import { EASY_SEED, HARD_SEED, loadWorld } from "./worlds.js";

/** Plays a started game, flapping before each tick in `flapTicks`, until it is over. */
function play(course: Course, flapTicks: readonly number[], bird: BirdBox = DEFAULT_BIRD, maxTicks = 100_000): GameState {
  const state = createGame(course, bird);
  expect(applyInputInPlace(state)).toBe("started");
  const flaps = new Set(flapTicks);
  while (state.phase === "playing" && state.tick < maxTicks) {
    stepInPlace(state, flaps.has(state.tick + 1));
  }
  return state;
}

/** A course the bird can never hit: every gap covers any reachable height. */
function openCourse(pipeCount: number, pipeSpacing = 191, viewport = DEFAULT_VIEWPORT): Course {
  return {
    pipeSpacing,
    viewport,
    pipes: Array.from({ length: pipeCount }, () => ({ gapStart: -1e9, gapHeight: 2e9 })),
  };
}

/** A course whose first pipe has the given gap and the rest are open. */
function courseWithFirstGap(gapStart: number, gapHeight: number, viewport = DEFAULT_VIEWPORT, pipeSpacing = 191): Course {
  const c = openCourse(20, pipeSpacing, viewport);
  return { ...c, pipes: [{ gapStart, gapHeight }, ...c.pipes.slice(1)] };
}

const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];

describe("pipesInView", () => {
  it("is FlappyGo's integer pipesToRender", () => {
    expect(pipesInView(480, 191)).toBe(5); // 1440 / 263
    expect(pipesInView(480, 228)).toBe(4); // 1440 / 300
    expect(pipesInView(480, 191.9)).toBe(5); // int(pipe_spacing) truncates
    expect(pipesInView(100, 300)).toBe(0);
  });
});

describe("FlappyGo's published worlds (test-data/flappygo/worlds)", () => {
  it("a game without flaps ends at tick 52 (easy) and 34 (hard) with score 0", () => {
    const easy = play(loadWorld(EASY_SEED), []);
    expect({ tick: easy.tick, score: easy.score, died: easy.died, phase: easy.phase }).toEqual({
      tick: 52,
      score: 0,
      died: true,
      phase: "over",
    });
    const hard = play(loadWorld(HARD_SEED), []);
    expect({ tick: hard.tick, score: hard.score, died: hard.died }).toEqual({ tick: 34, score: 0, died: true });
    expect(createGame(loadWorld(EASY_SEED)).pipesInView).toBe(5);
    expect(createGame(loadWorld(HARD_SEED)).pipesInView).toBe(4);
  });

  it("the easy trace's flap ticks end the game at tick 402 with score 7", () => {
    const s = play(loadWorld(EASY_SEED), EASY_FLAP_TICKS);
    expect({ tick: s.tick, score: s.score, died: s.died, courseEnd: s.courseEnd }).toEqual({
      tick: 402,
      score: 7,
      died: true,
      courseEnd: false,
    });
    // Dies at pipe 7: the first pipe in view.
    expect(s.closestPipe).toBe(7);
  });

  it("the pure step gives the same game as stepInPlace, frame by frame", () => {
    const course = loadWorld(EASY_SEED);
    const flaps = new Set(EASY_FLAP_TICKS);
    let pure = applyInput(createGame(course)).state;
    const mutable = createGame(course);
    applyInputInPlace(mutable);
    let scoredTicks = 0;
    while (mutable.phase === "playing") {
      const flap = flaps.has(mutable.tick + 1);
      const before = structuredClone(pure);
      const r = step(pure, flap);
      expect(pure).toEqual(before); // the input is untouched
      const events = stepInPlace(mutable, flap);
      expect(r.events).toEqual(events);
      expect(r.state).toEqual(mutable);
      expect(r.view).toEqual(viewOf(mutable));
      expect(r.view.pipes).toHaveLength(5);
      if (events.scored) scoredTicks++;
      pure = r.state;
    }
    expect(scoredTicks).toBe(7);
    expect(pure.tick).toBe(402);
  });

});

describe("tick semantics", () => {
  it("ticks only while playing; the starting press does not flap", () => {
    const s = createGame(openCourse(10));
    expect(step(s, false).events.ticked).toBe(false);
    expect(step(s, false).state.tick).toBe(0);
    const r = step(s, true);
    expect(r.events.ticked).toBe(true);
    expect(r.state.phase).toBe("playing");
    expect(r.state.tick).toBe(1);
    expect(r.state.birdVelocity).toBe(GRAVITY);
    expect(r.state.birdY).toBe(200 + GRAVITY);
  });

  it("a flap sets the velocity before gravity; several presses in one tick are one flap", () => {
    const s = createGame(openCourse(10));
    applyInputInPlace(s);
    tickInPlace(s);
    const once = cloneGame(s);
    expect(applyInputInPlace(once)).toBe("flap");
    tickInPlace(once);
    expect(once.birdVelocity).toBe(-FLAP_VELOCITY + GRAVITY);
    expect(once.birdY).toBe(s.birdY + (-FLAP_VELOCITY + GRAVITY));
    const thrice = cloneGame(s);
    applyInputInPlace(thrice);
    applyInputInPlace(thrice);
    applyInputInPlace(thrice);
    tickInPlace(thrice);
    expect(thrice).toEqual(once);
  });

  it("a flap takes effect when it is applied: the velocity is set at once, the position at the next tick", () => {
    const s = createGame(openCourse(10));
    applyInputInPlace(s);
    tickInPlace(s);
    tickInPlace(s);
    const before = cloneGame(s);
    expect(applyInputInPlace(s)).toBe("flap");
    expect(s.birdVelocity).toBe(-FLAP_VELOCITY);
    expect({ ...s, birdVelocity: before.birdVelocity }).toEqual(before); // nothing else changed
    tickInPlace(s);
    expect(s.tick).toBe(3);
    expect(s.birdY).toBe(before.birdY + (-FLAP_VELOCITY + GRAVITY));
  });

  it("the speed ramp lasts six ticks, then pwx = -250.5 + 5k", () => {
    const s = createGame(openCourse(30));
    applyInputInPlace(s);
    const speeds: number[] = [];
    for (let k = 1; k <= 6; k++) {
      tickInPlace(s);
      speeds.push(s.pipeSpeed);
    }
    expect(speeds).toEqual([2.5, 3, 3.5, 4, 4.5, 5]);
    for (let k = 7; k <= 200; k++) {
      tickInPlace(s);
      expect(s.pipeSpeed).toBe(MAX_PIPE_SPEED);
      expect(s.pipeWindowX).toBe(-250.5 + 5 * k);
    }
  });

  it("the first point comes at tick 65", () => {
    const s = createGame(openCourse(30));
    applyInputInPlace(s);
    let first = 0;
    while (first === 0) {
      if (tickInPlace(s).scored) first = s.tick;
    }
    expect(first).toBe(65);
    expect(s.score).toBe(1);
    expect(s.closestPipe).toBe(1);
  });

  it("the game is over after a collision and ignores inputs", () => {
    const s = createGame(courseWithFirstGap(10_000, 10));
    applyInputInPlace(s);
    let events = tickInPlace(s);
    while (!events.died) events = tickInPlace(s);
    expect(s.phase).toBe("over");
    const frozen = cloneGame(s);
    expect(applyInputInPlace(s)).toBe("ignored");
    expect(stepInPlace(s, true).ticked).toBe(false);
    expect(s).toEqual(frozen);
    expect(viewOf(s).gameOver).toBe(true);
  });
});

describe("collisions are strict", () => {
  /** The tick a no-flap game dies at, or undefined when it survives `maxTicks`. */
  const dieTick = (course: Course, bird: BirdBox = DEFAULT_BIRD, maxTicks = 2000): number | undefined => {
    const s = play(course, [], bird, maxTicks);
    return s.died ? s.tick : undefined;
  };
  const unreachable = (viewport = DEFAULT_VIEWPORT): Course => courseWithFirstGap(1e6, 1, viewport);

  it("right edge: the bird's right side must pass strictly beyond the pipe's left edge", () => {
    // Tick 1: pipe 0 at x = 238. A bird 188 wide reaches exactly 238: no overlap yet.
    expect(dieTick(unreachable(), { width: 188, height: 24 })).toBe(2);
    expect(dieTick(unreachable(), { width: 189, height: 24 })).toBe(1);
  });

  it("left edge: a pipe whose right edge is exactly at the bird's left side no longer hits", () => {
    // Viewport 35 wide, spacing 0: at tick 10 pwx = 22, so pipe 0 is at x = -22 (right edge 50).
    // No flap: y(9) = 211.25, y(10) = 213.75; the gap ends at 211.25 + 24, so the bird leaves it at tick 10.
    const narrow = { width: 35, height: 640 };
    const survives = play(courseWithFirstGap(0, 235.25, narrow, 0), [], DEFAULT_BIRD, 200);
    expect(survives.died).toBe(false);
    expect(survives.tick).toBeGreaterThan(10);
    // One px wider: pipe 0 is at x = -21 at tick 10 and still overlaps.
    expect(dieTick(courseWithFirstGap(0, 235.25, { width: 37, height: 640 }, 0))).toBe(10);
  });

  it("top and bottom of the gap touching the bird do not hit", () => {
    const wide = { width: 189, height: 24 }; // overlaps pipe 0 from tick 1
    // y(1) = 200.25 equals gap_start: inside; 200.5 > y(1): hit at tick 1.
    expect(dieTick(courseWithFirstGap(200.25, 1000), wide, 1)).toBeUndefined();
    expect(dieTick(courseWithFirstGap(200.5, 1000), wide)).toBe(1);
    // y(4) = 202.5, so y(4) + 24 = 226.5 equals the gap's bottom: inside at tick 4, out at tick 5.
    expect(dieTick(courseWithFirstGap(0, 226.5), wide)).toBe(5);
    expect(dieTick(courseWithFirstGap(0, 226.4), wide)).toBe(4);
  });
});

describe("end of the course", () => {
  it("ends the game cleanly where FlappyGo indexed past its pipes", () => {
    // 10 pipes, 5 in view: pipe 10 would be needed once the closest pipe is 6,
    // i.e. once pwx - 72 > 5 * 263, first at tick 328 (pwx = -250.5 + 5k).
    const s = play(openCourse(10), [], DEFAULT_BIRD, 10_000);
    expect(s.courseEnd).toBe(true);
    expect(s.died).toBe(false);
    expect(s.phase).toBe("over");
    expect(s.tick).toBe(328);
    expect(s.score).toBe(6);
    const v = viewOf(s);
    expect(v.courseEnd).toBe(true);
    expect(v.gameOver).toBe(true);
    expect(v.pipes.map((p) => p.index)).toEqual([6, 7, 8, 9]);
  });

  it("reports the course end in the events of that tick", () => {
    const s = createGame(openCourse(10));
    applyInputInPlace(s);
    let ends = 0;
    let last = tickInPlace(s);
    while (s.phase === "playing") {
      last = tickInPlace(s);
      if (last.courseEnd) ends++;
    }
    expect(ends).toBe(1);
    expect(last).toEqual({ ticked: true, scored: true, died: false, courseEnd: true });
  });
});

describe("validation and isolation", () => {
  it("rejects courses that cannot be played", () => {
    const ok = openCourse(10);
    expect(validateCourse(ok)).toBeUndefined();
    expect(() => createGame({ ...ok, pipes: [] })).toThrow(RangeError);
    expect(() => createGame({ ...ok, pipes: ok.pipes.slice(0, 4) })).toThrow(/at least 5 pipes/);
    expect(() => createGame({ ...ok, pipeSpacing: Number.NaN })).toThrow(/pipe spacing/);
    expect(() => createGame({ ...ok, pipeSpacing: 2000 })).toThrow(/no pipe fits/);
    expect(() => createGame({ ...ok, viewport: { width: 0, height: 640 } })).toThrow(/viewport/);
    expect(() => createGame({ ...ok, viewport: { width: 480.5, height: 640 } })).toThrow(/viewport/);
    expect(() => createGame(ok, { width: 0, height: 24 })).toThrow(/bird/);
    expect(() => createGame({ ...ok, pipes: [...ok.pipes, { gapStart: 1, gapHeight: 0 }] })).toThrow(/pipe 10/);
  });

  it("copies the course: later changes to the input do not affect the game", () => {
    const pipes = openCourse(10).pipes.map((p) => ({ ...p }));
    const course = { pipeSpacing: 191, viewport: { width: 480, height: 640 }, pipes };
    const s = createGame(course);
    pipes[0] = { gapStart: 1e6, gapHeight: 1 };
    course.viewport.width = 10;
    expect(s.course.pipes[0]).toEqual({ gapStart: -1e9, gapHeight: 2e9 });
    expect(s.course.viewport.width).toBe(480);
    expect(Object.isFrozen(s.course.pipes)).toBe(true);
  });

  it("shares a snapshot between games instead of copying it again", () => {
    const snapshot = snapshotCourse(openCourse(10));
    expect(snapshotCourse(snapshot)).toBe(snapshot);
    expect(createGame(snapshot).course).toBe(snapshot);
    expect(createGame(snapshot).course).toBe(createGame(snapshot).course);
    // A frozen look-alike that is not a snapshot is still copied.
    const lookAlike = Object.freeze({ ...snapshot });
    expect(createGame(lookAlike).course).not.toBe(lookAlike);
  });
});
