import { BIRD_X, type BirdBox, type Course, DEFAULT_BIRD, FLAP_VELOCITY, GRAVITY, PIPE_WIDTH, START_BIRD_Y, TICK_MS, type Viewport, validateCourse } from "@flaplab/physics";
import { type GameOutcome, courseFor, simulateCourse } from "../simulate.js";
import { PlanError } from "./plan.js";
import { type Timeline, buildTimeline } from "./timeline.js";

export interface SurvivalOptions {
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
  /** Ticks the bird must stay alive (default 1,819: 60 s of 33 ms ticks). */
  readonly minTicks?: number;
  /** px below the next gap's centre that the planned path aims for at its last tick (default 0). */
  readonly marginPx?: number;
}

export interface SurvivalPlan extends GameOutcome {
  readonly seed: bigint;
  /** The course the plan is for: what a game of `seed` plays. */
  readonly course: Course;
  /** Ticks before which to flap (ascending; 1 = the first tick after the start press). */
  readonly flapTicks: readonly number[];
  readonly marginPx: number;
}

/** 60 s of ticks. */
export const DEFAULT_SURVIVAL_TICKS = Math.ceil(60_000 / TICK_MS);
/** Ticks planned beyond `minTicks`; after the last flap the bird falls into a pipe. */
const SLACK_TICKS = 60;
/** Height of the bands the birds of one tick are grouped in, px. */
const Y_GRID = 2;

// Local copies for the hot loop: some loaders (vitest) turn imported bindings into property reads.
const G = GRAVITY;
const FLAP_V = -FLAP_VELOCITY;

/** How one tick's birds came about: the bird of the tick before each came from, and whether it flapped. */
interface Layer {
  readonly parent: Int32Array;
  readonly flap: Uint8Array;
}

/** Centre (px from the top) of the gap of the first pipe whose right edge has not passed the bird, after tick t. */
function nextGapCentre(course: Course, tl: Timeline, t: number): number {
  const span = PIPE_WIDTH + course.pipeSpacing;
  const next = Math.min(course.pipes.length - 1, Math.max(0, Math.ceil(((tl.windowX[t] as number) + BIRD_X - PIPE_WIDTH) / span)));
  const gap = course.pipes[next] as { gapStart: number; gapHeight: number };
  return gap.gapStart + gap.gapHeight / 2;
}

/**
 * Flap ticks that keep the bird alive for `ticks` ticks (or to the end of the course): every tick,
 * each bird kept is stepped with and without a flap, dead ones are dropped, and per `yGrid` px
 * band of height the slowest and the fastest bird are kept (the slowest is the easiest to hold,
 * the fastest the only one that drops to a much lower gap in time). The path of the bird nearest
 * the next gap's centre (plus `marginPx`) at the end is read back. Such a path flaps often, about
 * every 6 ticks, with no margin to spare: a flap that lands a tick late may end the game.
 */
export function survivalFlapTicks(course: Course, bird: BirdBox, ticks: number, marginPx: number, yGrid = Y_GRID): number[] {
  const tl = buildTimeline(course, bird, ticks);
  const bh = bird.height;
  // This tick's birds (y, v) and the next tick's (ny, nv, parent, flap), grown as needed.
  let y = Float64Array.of(START_BIRD_Y);
  let v = Float64Array.of(0);
  let ny = new Float64Array(64);
  let nv = new Float64Array(64);
  let parent = new Int32Array(64);
  let flap = new Uint8Array(64);
  let count = 1;
  const layers: Layer[] = [{ parent: Int32Array.of(-1), flap: Uint8Array.of(0) }];
  const bandSlot = new Map<number, number>();
  for (let t = 1; t <= tl.length; t++) {
    if (ny.length < 4 * count) {
      const n = 8 * count;
      ny = new Float64Array(n);
      nv = new Float64Array(n);
      parent = new Int32Array(n);
      flap = new Uint8Array(n);
    }
    let size = 0;
    bandSlot.clear();
    const lo = tl.lo[t] as number;
    const hi = tl.hi[t] as number;
    for (let p = 0; p < count; p++) {
      for (let f = 0; f < 2; f++) {
        const cv = (f === 1 ? FLAP_V : (v[p] as number)) + G;
        const cy = (y[p] as number) + cv;
        if (cy < lo || cy + bh > hi) continue;
        // Slot s holds the band's slowest bird, s + 1 its fastest.
        const band = Math.round(cy / yGrid);
        let s = bandSlot.get(band);
        if (s === undefined) {
          s = size;
          size += 2;
          bandSlot.set(band, s);
          nv[s] = Number.POSITIVE_INFINITY;
          nv[s + 1] = Number.NEGATIVE_INFINITY;
        }
        if (cv < (nv[s] as number)) {
          ny[s] = cy;
          nv[s] = cv;
          parent[s] = p;
          flap[s] = f;
        }
        if (cv > (nv[s + 1] as number)) {
          ny[s + 1] = cy;
          nv[s + 1] = cv;
          parent[s + 1] = p;
          flap[s + 1] = f;
        }
      }
    }
    if (size === 0) throw new PlanError(`no flap schedule survives tick ${t}`);
    layers.push({ parent: parent.slice(0, size), flap: flap.slice(0, size) });
    [y, ny] = [ny, y];
    [v, nv] = [nv, v];
    count = size;
  }
  const last = layers.length - 1;
  const target = nextGapCentre(course, tl, last) + marginPx - bh / 2;
  let index = 0;
  for (let i = 1; i < count; i++) {
    if (Math.abs((y[i] as number) - target) < Math.abs((y[index] as number) - target)) index = i;
  }
  const flaps: number[] = [];
  for (let t = last; t >= 1; t--) {
    const layer = layers[t] as Layer;
    if (layer.flap[index] === 1) flaps.push(t);
    index = layer.parent[index] as number;
  }
  return flaps.reverse();
}

/**
 * A flap schedule for `seed`'s course that keeps the bird alive for at least `minTicks` ticks,
 * for load: it is planned `minTicks` + 60 ticks ahead (`survivalFlapTicks`), after which the bird
 * falls into a pipe, and verified by playing it with the physics. Unlike `planGame`'s schedules it
 * flaps often and has no margin for late flaps. Throws `PlanError` when no schedule survives that
 * long, `RangeError` for bad options.
 */
export function planSurvival(seed: bigint, opts: SurvivalOptions = {}): SurvivalPlan {
  const minTicks = opts.minTicks ?? DEFAULT_SURVIVAL_TICKS;
  const marginPx = opts.marginPx ?? 0;
  const bird = opts.bird ?? DEFAULT_BIRD;
  if (!Number.isInteger(minTicks) || minTicks < 1) throw new RangeError(`minTicks must be an integer ≥ 1, got ${minTicks}`);
  if (!Number.isFinite(marginPx)) throw new RangeError(`marginPx must be a finite number, got ${marginPx}`);
  const course = courseFor(seed, opts.viewport);
  const problem = validateCourse(course, bird);
  if (problem !== undefined) throw new RangeError(problem);
  const flapTicks = survivalFlapTicks(course, bird, minTicks + SLACK_TICKS, marginPx);
  const outcome = simulateCourse(course, flapTicks, bird);
  if (outcome.ticks < minTicks) {
    throw new PlanError(`the flap schedule for seed ${seed} survives only ${outcome.ticks} ticks, not ${minTicks}`);
  }
  return { seed, course, flapTicks, marginPx, ...outcome };
}
