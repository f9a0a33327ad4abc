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

/** One tick's birds: position, velocity, the bird of the tick before it came from, and whether it flapped. */
interface Layer {
  readonly y: Float64Array;
  readonly v: Float64Array;
  readonly parent: Int32Array;
  readonly flap: Uint8Array;
  readonly size: number;
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
  const layers: Layer[] = [{ y: Float64Array.of(START_BIRD_Y), v: Float64Array.of(0), parent: Int32Array.of(-1), flap: Uint8Array.of(0), size: 1 }];
  const bandSlot = new Map<number, number>();
  let last = 0;
  for (let t = 1; t <= tl.length; t++) {
    const prev = layers[t - 1] as Layer;
    const cap = 4 * prev.size;
    const y = new Float64Array(cap);
    const v = new Float64Array(cap);
    const parent = new Int32Array(cap);
    const flap = new Uint8Array(cap);
    let size = 0;
    bandSlot.clear();
    const lo = tl.lo[t] as number;
    const hi = tl.hi[t] as number;
    for (let p = 0; p < prev.size; p++) {
      for (let f = 0; f < 2; f++) {
        const cv = (f === 1 ? FLAP_V : (prev.v[p] as number)) + G;
        const cy = (prev.y[p] as number) + cv;
        if (cy < lo || cy + bh > hi) continue;
        // Slot s holds the band's slowest bird, s + 1 its fastest.
        const band = Math.round(cy / yGrid);
        let s = bandSlot.get(band);
        if (s === undefined) {
          s = size;
          size += 2;
          bandSlot.set(band, s);
          v[s] = Number.POSITIVE_INFINITY;
          v[s + 1] = Number.NEGATIVE_INFINITY;
        }
        if (cv < (v[s] as number)) {
          y[s] = cy;
          v[s] = cv;
          parent[s] = p;
          flap[s] = f;
        }
        if (cv > (v[s + 1] as number)) {
          y[s + 1] = cy;
          v[s + 1] = cv;
          parent[s + 1] = p;
          flap[s + 1] = f;
        }
      }
    }
    if (size === 0) throw new PlanError(`no flap schedule survives tick ${t}`);
    layers.push({ y, v, parent, flap, size });
    last = t;
  }
  const end = layers[last] as Layer;
  const target = nextGapCentre(course, tl, last) + marginPx - bh / 2;
  let index = 0;
  for (let i = 1; i < end.size; i++) {
    if (Math.abs((end.y[i] as number) - target) < Math.abs((end.y[index] as number) - target)) index = i;
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
