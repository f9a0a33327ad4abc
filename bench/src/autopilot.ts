// A flap schedule that keeps a bird alive for a long time, found by simulating the physics: flap
// whenever the bird's centre sinks below the centre of the next gap plus a margin (y grows downwards),
// backtracking where that rule alone would hit a pipe.
import {
  BIRD_X,
  type Course,
  DEFAULT_BIRD,
  DEFAULT_VIEWPORT,
  PIPE_WIDTH,
  TICK_MS,
  type GameState,
  applyInputInPlace,
  cloneGame,
  createGame,
  tickInPlace,
} from "@flaplab/physics";
import { simulateCourse } from "@flaplab/simulator";
import { generateWorld } from "@flaplab/worldgen";

/** The published "easy seed" of the FlappyGo study. */
export const EASY_SEED = 6977347407732442987n;

export interface FlapSchedule {
  readonly seed: bigint;
  readonly course: Course;
  /** Ticks before which a flap is applied (1 = the first tick), ascending. */
  readonly flapTicks: readonly number[];
  /** Margin in px used by the autopilot. */
  readonly marginPx: number;
  /** Ticks the schedule survives on the course (verified by the simulator). */
  readonly survivesTicks: number;
  /** It ended at the end of the course rather than in a pipe. */
  readonly courseEnd: boolean;
}

/** The world the engine plays for `seed` in the browser's 480×640 viewport. */
export function courseFor(seed: bigint): Course {
  const w = generateWorld(seed, DEFAULT_VIEWPORT);
  return { pipeSpacing: w.pipeSpacing, viewport: w.viewport, pipes: w.pipes };
}

/** Centre (px from the top) of the gap of the first pipe whose right edge has not passed the bird. */
function nextGapCentre(state: GameState): number {
  const course = state.course;
  const span = PIPE_WIDTH + course.pipeSpacing;
  const next = Math.min(course.pipes.length - 1, Math.max(0, Math.ceil((state.pipeWindowX + BIRD_X - PIPE_WIDTH) / span)));
  const gap = course.pipes[next]!;
  return gap.gapStart + gap.gapHeight / 2;
}

interface Node {
  readonly y: number;
  readonly v: number;
  /** Index of the node it came from in the previous tick's list. */
  readonly parent: number;
  /** A flap was applied before this tick. */
  readonly flap: boolean;
}

/**
 * Flap ticks for `course` that survive `ticks` ticks (or to the end of the course). The simple
 * autopilot rule (flap when the bird's centre is below the next gap's centre) crashes on this
 * course's steep changes, so this plans with the physics instead: every tick, each bird position
 * kept is stepped with and without a flap, dead ones are dropped, and per 2 px band of height the
 * slowest and the fastest bird are kept (the slowest is the easiest to hold, the fastest the only
 * one that drops to a much lower gap in time). The path of the bird nearest the next gap's centre
 * (plus `marginPx`) at the end is read back. Throws when no path survives.
 */
export function autopilotTicks(course: Course, marginPx: number, ticks: number, yGrid = 2): number[] {
  const ref = createGame(course, DEFAULT_BIRD);
  applyInputInPlace(ref); // the start press
  const layers: Node[][] = [[{ y: ref.birdY, v: ref.birdVelocity, parent: -1, flap: false }]];
  let refState = ref;
  for (let t = 1; t <= ticks; t++) {
    const prev = layers[t - 1]!;
    const kept = new Map<number, Node>();
    let nextRef: GameState | undefined;
    prev.forEach((node, parent) => {
      for (const flap of [false, true]) {
        const s = cloneGame(refState);
        s.birdY = node.y;
        s.birdVelocity = node.v;
        if (flap) applyInputInPlace(s);
        tickInPlace(s);
        if (s.died) continue;
        nextRef ??= s;
        const child: Node = { y: s.birdY, v: s.birdVelocity, parent, flap };
        const band = Math.round(s.birdY / yGrid) * 2;
        const slow = kept.get(band);
        if (!slow || child.v < slow.v) kept.set(band, child);
        const fast = kept.get(band + 1);
        if (!fast || child.v > fast.v) kept.set(band + 1, child);
      }
    });
    if (!nextRef) throw new Error(`no flap schedule survives tick ${t}`);
    refState = nextRef;
    layers.push([...kept.values()]);
    if (refState.phase !== "playing") break;
  }
  const last = layers[layers.length - 1]!;
  const target = nextGapCentre(refState) + marginPx - refState.bird.height / 2;
  let index = 0;
  last.forEach((n, i) => {
    if (Math.abs(n.y - target) < Math.abs(last[index]!.y - target)) index = i;
  });
  const flaps: number[] = [];
  for (let t = layers.length - 1; t >= 1; t--) {
    const node = layers[t]![index]!;
    if (node.flap) flaps.push(t);
    index = node.parent;
  }
  return flaps.reverse();
}

/**
 * A flap schedule for `seed`'s course that survives at least `minTicks` ticks (default: 60 s),
 * verified by replaying it through the simulator.
 */
export function findFlapSchedule(seed: bigint = EASY_SEED, minTicks = Math.ceil(60_000 / TICK_MS)): FlapSchedule {
  const course = courseFor(seed);
  const marginPx = 0;
  const flapTicks = autopilotTicks(course, marginPx, minTicks + 60);
  const outcome = simulateCourse(course, flapTicks);
  if (outcome.ticks < minTicks) {
    throw new Error(`the flap schedule for seed ${seed} survives only ${outcome.ticks} ticks, not ${minTicks}`);
  }
  return { seed, course, flapTicks, marginPx, survivesTicks: outcome.ticks, courseEnd: outcome.courseEnd };
}
