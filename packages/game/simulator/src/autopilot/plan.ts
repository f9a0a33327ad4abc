import {
  type BirdBox,
  type Course,
  DEFAULT_BIRD,
  type Viewport,
  applyInputInPlace,
  createGame,
  stepInPlace,
  validateCourse,
} from "@flaplab/physics";
import { type GameOutcome, courseFor, simulateCourse } from "../simulate.js";
import { search } from "./search.js";
import { type Goal, type Timeline, buildTimeline, clearance, depth, goalFor } from "./timeline.js";

export interface PlanOptions {
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
  /** Points to reach before the bird is let die at the next pipe (default 30). */
  readonly targetScore?: number;
  /** How many ticks each flap may land early or late without changing the outcome (default 2). */
  readonly robustTicks?: number;
  /** Longest game to plan, in ticks (game over included); the target is lowered to fit. */
  readonly maxTicks?: number;
}

export interface GamePlan extends GameOutcome {
  /** Ticks before which to flap (ascending; 1 = the first tick after the start press). */
  readonly flapTicks: number[];
  /** The score the plan was made for: `targetScore`, or less when that could not be reached. */
  readonly targetScore: number;
  /** The shift (ticks) every flap was verified to tolerate: the requested `robustTicks`. */
  readonly robustTicks: number;
  /** See `PlanCheck.minMargin`. */
  readonly minMargin: number;
}

export interface ShiftOutcome {
  /** Index into `flapTicks`. */
  readonly flap: number;
  /** Ticks the flap was moved by (negative = earlier). */
  readonly shift: number;
  readonly score: number;
  readonly ticks: number;
  /** Smallest clearance of this variant in px (see `PlanCheck.minMargin`). */
  readonly margin: number;
}

export interface PlanCheck extends GameOutcome {
  /**
   * Smallest distance in px, over the game as planned and every single-flap shift within
   * ±`robustTicks`, between the bird and the pipe edge that would change the outcome: its clearance
   * inside each pipe before the final score, and how far it is outside the gap when it reaches
   * the pipe it is meant to hit. Negative when some shift changes the score or the game-over tick.
   */
  readonly minMargin: number;
  /** Every shifted variant: flap `i` moved by ±1…±robustTicks ticks, all others in place. */
  readonly shifts: ShiftOutcome[];
  /** Every shifted variant ends with the same score and game-over tick as the plan. */
  readonly robust: boolean;
}

/** No schedule meets the constraints. */
export class PlanError extends Error {
  override name = "PlanError";
}

export const DEFAULT_TARGET_SCORE = 30;
export const DEFAULT_ROBUST_TICKS = 2;
/** Margin (px) the first search asks for; 0 when that fails, raised while searches succeed. */
const FIRST_MARGIN = 8;
/** Searches per target score. */
const MAX_SEARCHES = 4;

interface Variant {
  readonly score: number;
  readonly ticks: number;
  readonly died: boolean;
  readonly courseEnd: boolean;
  readonly margin: number;
}

/** Plays `flaps` with the physics and measures the clearance the goal depends on. */
function playMeasured(course: Course, bird: BirdBox, tl: Timeline, goal: Goal, flaps: readonly number[]): Variant {
  const set = new Set(flaps);
  const state = createGame(course, bird);
  applyInputInPlace(state);
  let margin = Number.POSITIVE_INFINITY;
  while (state.phase === "playing") {
    stepInPlace(state, set.has(state.tick + 1));
    const t = state.tick;
    if (t <= goal.endTick && t <= tl.length) margin = Math.min(margin, clearance(tl, t, state.birdY, bird.height));
    if (t === goal.deathTick) margin = Math.min(margin, depth(tl, t, state.birdY, bird.height));
  }
  return { score: state.score, ticks: state.tick, died: state.died, courseEnd: state.courseEnd, margin };
}

/** A seed's course and the options, checked. */
export interface Resolved {
  readonly course: Course;
  readonly bird: BirdBox;
  readonly target: number;
  readonly robust: number;
  readonly maxTicks: number;
}

export function resolve(seed: bigint, opts: PlanOptions): Resolved {
  const target = opts.targetScore ?? DEFAULT_TARGET_SCORE;
  const robust = opts.robustTicks ?? DEFAULT_ROBUST_TICKS;
  const maxTicks = opts.maxTicks ?? Number.POSITIVE_INFINITY;
  if (!Number.isInteger(target) || target < 0) throw new RangeError(`targetScore must be an integer ≥ 0, got ${target}`);
  if (!Number.isInteger(robust) || robust < 0 || robust > 10) throw new RangeError(`robustTicks must be an integer in 0…10, got ${robust}`);
  if (maxTicks !== Number.POSITIVE_INFINITY && (!Number.isInteger(maxTicks) || maxTicks < 1)) {
    throw new RangeError(`maxTicks must be an integer ≥ 1, got ${maxTicks}`);
  }
  const bird = opts.bird ?? DEFAULT_BIRD;
  const course = courseFor(seed, opts.viewport);
  const problem = validateCourse(course, bird);
  if (problem !== undefined) throw new RangeError(problem);
  return { course, bird, target, robust, maxTicks };
}

/** The outcome of `flaps` and of every single-flap shift within ±robust ticks. */
function checkOn(r: Resolved, tl: Timeline, goal: Goal, flaps: readonly number[]): PlanCheck {
  const nominal = playMeasured(r.course, r.bird, tl, goal, flaps);
  const shifts: ShiftOutcome[] = [];
  let minMargin = nominal.margin;
  let robust = true;
  for (let i = 0; i < flaps.length; i++) {
    for (let s = -r.robust; s <= r.robust; s++) {
      if (s === 0) continue;
      const moved = [...flaps];
      moved[i] = Math.max(1, (flaps[i] as number) + s);
      const out = playMeasured(r.course, r.bird, tl, goal, moved);
      shifts.push({ flap: i, shift: s, score: out.score, ticks: out.ticks, margin: out.margin });
      minMargin = Math.min(minMargin, out.margin);
      if (out.score !== nominal.score || out.ticks !== nominal.ticks) robust = false;
    }
  }
  const { margin: _m, ...outcome } = nominal;
  return { ...outcome, minMargin, shifts, robust };
}

/**
 * Plans a game on the world of `seed`: flap ticks that reach `targetScore` points and then let
 * the bird fall into the next pipe (or, when the course ends first, play to its end), such that
 * every flap may land up to `robustTicks` ticks early or late, one at a time, without changing
 * the score or the game-over tick. When no such schedule exists for the target, the highest
 * score that has one is planned instead (`targetScore` in the result says which).
 */
export function planGame(seed: bigint, opts: PlanOptions = {}): GamePlan {
  const r = resolve(seed, opts);
  const tl = buildTimeline(r.course, r.bird, r.maxTicks);
  // Flaps are planned only while the bird is on screen, give or take its height.
  const yRange = [-2 * r.bird.height, r.course.viewport.height + r.bird.height] as const;
  let target = r.target;
  for (;;) {
    let goal = goalFor(tl, target);
    while (goal === undefined && target > 0) goal = goalFor(tl, --target);
    if (goal === undefined) throw new RangeError(`no game fits in ${r.maxTicks} ticks`);
    let best: { flapTicks: number[]; check: PlanCheck } | undefined;
    let reach = 0;
    let level = FIRST_MARGIN;
    for (let i = 0; i < MAX_SEARCHES; i++) {
      const res = search(tl, goal, r.bird.height, r.robust, level, yRange);
      reach = Math.max(reach, res.reach);
      const check = res.found && checkOn(r, tl, goal, res.found.flapTicks);
      if (res.found && check?.robust && check.score === goal.target) {
        if (best === undefined || check.minMargin > best.check.minMargin) best = { flapTicks: res.found.flapTicks, check };
        level = Math.floor(Math.max(level, check.minMargin)) + 2;
      } else if (best === undefined && level > 0) {
        level = 0;
      } else {
        break;
      }
    }
    if (best !== undefined) {
      const { check } = best;
      return {
        flapTicks: best.flapTicks,
        score: check.score,
        ticks: check.ticks,
        died: check.died,
        courseEnd: check.courseEnd,
        targetScore: goal.target,
        robustTicks: r.robust,
        minMargin: check.minMargin,
      };
    }
    if (goal.target === 0) throw new PlanError(`no schedule found for seed ${seed} with every flap ±${r.robust} ticks, not even for score 0`);
    target = Math.min(goal.target - 1, reach);
  }
}

/**
 * Checks a flap schedule on the world of `seed`: the outcome, and the outcome of every variant
 * with one flap moved by ±1…±`robustTicks` ticks (default 2). The final score is the one the
 * margins are measured for.
 */
export function checkPlan(seed: bigint, flapTicks: readonly number[], opts: Omit<PlanOptions, "targetScore" | "maxTicks"> = {}): PlanCheck {
  const r = resolve(seed, opts);
  const flaps = [...new Set(flapTicks)].sort((a, b) => a - b);
  const played = simulateCourse(r.course, flaps, r.bird);
  const tl = buildTimeline(r.course, r.bird, played.ticks + 1);
  const goal = goalFor(tl, played.score) ?? { target: played.score, endTick: played.ticks, deathTick: undefined };
  return checkOn(r, tl, goal, flaps);
}

