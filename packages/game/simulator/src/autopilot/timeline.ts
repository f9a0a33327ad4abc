import { BIRD_X, type BirdBox, type Course, PIPE_WIDTH, applyInputInPlace, createGame, tickInPlace } from "@flaplab/physics";

/**
 * Where the pipes are on every tick, independent of the bird: the corridor its top edge must stay
 * in (`lo ≤ y` and `y + birdHeight ≤ hi`; ±Infinity when no pipe overlaps it) and the score.
 */
export interface Timeline {
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  /** Score after tick t (index 0 = before tick 1). */
  readonly score: Int32Array;
  /** The pipe window's x after tick t (index 0 = before tick 1). */
  readonly windowX: Float64Array;
  /** Ticks computed; the last one may be the course end. */
  readonly length: number;
  /** Tick at which the course ends, or Infinity when it does not end within `length` ticks. */
  readonly courseEndTick: number;
}

/**
 * Plays the course with a bird whose y is NaN (every comparison false, so it never collides):
 * the physics' own pipe motion, score and speed ramp, then the corridor per tick from the
 * same overlap test the physics uses. A bird at y dies at tick t exactly when
 * `y < lo[t] || y + birdHeight > hi[t]`.
 */
export function buildTimeline(course: Course, bird: BirdBox, maxTicks: number): Timeline {
  const state = createGame(course, bird);
  applyInputInPlace(state);
  state.birdY = Number.NaN;
  const lo: number[] = [Number.NEGATIVE_INFINITY];
  const hi: number[] = [Number.POSITIVE_INFINITY];
  const score: number[] = [0];
  const windowX: number[] = [state.pipeWindowX];
  const span = PIPE_WIDTH + state.course.pipeSpacing;
  const pipes = state.course.pipes;
  let courseEndTick = Number.POSITIVE_INFINITY;
  while (state.phase === "playing" && state.tick < maxTicks) {
    tickInPlace(state);
    let l = Number.NEGATIVE_INFINITY;
    let h = Number.POSITIVE_INFINITY;
    const last = Math.min(state.closestPipe + state.pipesInView, pipes.length);
    for (let j = state.closestPipe; j < last; j++) {
      const pos = j * span - state.pipeWindowX;
      if ((BIRD_X > pos && BIRD_X < pos + PIPE_WIDTH) || (BIRD_X + bird.width > pos && BIRD_X < pos + PIPE_WIDTH)) {
        const p = pipes[j] as { gapStart: number; gapHeight: number };
        l = Math.max(l, p.gapStart);
        h = Math.min(h, p.gapStart + p.gapHeight);
      }
    }
    lo.push(l);
    hi.push(h);
    score.push(state.score);
    windowX.push(state.pipeWindowX);
    if (state.courseEnd) courseEndTick = state.tick;
  }
  return {
    lo: Float64Array.from(lo),
    hi: Float64Array.from(hi),
    score: Int32Array.from(score),
    windowX: Float64Array.from(windowX),
    length: state.tick,
    courseEndTick,
  };
}

/** What a plan for one target score must achieve. */
export interface Goal {
  readonly target: number;
  /** Last protected tick: the score reaches the target (or the course ends) at this tick. */
  readonly endTick: number;
  /** Tick the bird first overlaps the pipe it is meant to hit; undefined at the course end. */
  readonly deathTick: number | undefined;
}

export function goalFor(tl: Timeline, target: number): Goal | undefined {
  let endTick = -1;
  for (let t = 0; t <= tl.length; t++) {
    if ((tl.score[t] as number) >= target) {
      endTick = t;
      break;
    }
  }
  if (endTick < 0) {
    // The course ends first: play to its end.
    if (tl.courseEndTick <= tl.length && (tl.score[tl.courseEndTick] as number) <= target) {
      return { target: tl.score[tl.courseEndTick] as number, endTick: tl.courseEndTick, deathTick: undefined };
    }
    return undefined;
  }
  if (endTick === tl.courseEndTick) return { target, endTick, deathTick: undefined };
  for (let t = endTick + 1; t <= tl.length; t++) {
    if ((tl.score[t] as number) > target) return undefined;
    if (tl.lo[t] !== Number.NEGATIVE_INFINITY || tl.hi[t] !== Number.POSITIVE_INFINITY) {
      return { target, endTick, deathTick: t };
    }
  }
  return undefined;
}

/** Clearance of a bird at `y` (top edge) at tick t; negative = it hits a pipe. */
export function clearance(tl: Timeline, t: number, y: number, bh: number): number {
  return Math.min(y - (tl.lo[t] as number), (tl.hi[t] as number) - (y + bh));
}

/** How far outside the gap the bird is at tick t; negative = inside it. */
export function depth(tl: Timeline, t: number, y: number, bh: number): number {
  return Math.max((tl.lo[t] as number) - y, y + bh - (tl.hi[t] as number));
}
