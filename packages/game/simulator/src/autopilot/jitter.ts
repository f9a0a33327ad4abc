import type { BirdBox, Viewport } from "@flaplab/physics";
import { simulateCourse } from "../simulate.js";
import { DEFAULT_ROBUST_TICKS, resolve } from "./plan.js";

export interface JitterOptions {
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
  /** Each flap moves by a uniformly drawn whole number of ticks in ±maxShift (default 2). */
  readonly maxShift?: number;
  /** Games played (default 1000). */
  readonly trials?: number;
  /** Seed of the pseudo-random shifts, so that a result can be repeated (default 1). */
  readonly rngSeed?: number;
}

export interface JitterResult {
  readonly trials: number;
  /** Trials that ended with the schedule's own score and game-over tick. */
  readonly same: number;
  readonly rate: number;
}

/**
 * Monte Carlo check of a schedule against jitter on every flap at once (the harder case than
 * `checkPlan`'s one flap at a time): each trial moves every flap by its own random shift.
 */
export function jitterSurvival(seed: bigint, flapTicks: readonly number[], opts: JitterOptions = {}): JitterResult {
  const maxShift = opts.maxShift ?? DEFAULT_ROBUST_TICKS;
  const trials = opts.trials ?? 1000;
  if (!Number.isInteger(maxShift) || maxShift < 0) throw new RangeError(`maxShift must be an integer ≥ 0, got ${maxShift}`);
  if (!Number.isInteger(trials) || trials < 1) throw new RangeError(`trials must be an integer ≥ 1, got ${trials}`);
  const r = resolve(seed, { ...(opts.viewport ? { viewport: opts.viewport } : {}), ...(opts.bird ? { bird: opts.bird } : {}) });
  const base = simulateCourse(r.course, flapTicks, r.bird);
  // mulberry32
  let state = (opts.rngSeed ?? 1) >>> 0;
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  let same = 0;
  for (let i = 0; i < trials; i++) {
    const moved = flapTicks.map((k) => Math.max(1, k + Math.floor(random() * (2 * maxShift + 1)) - maxShift));
    const out = simulateCourse(r.course, moved, r.bird);
    if (out.score === base.score && out.ticks === base.ticks) same++;
  }
  return { trials, same, rate: same / trials };
}
