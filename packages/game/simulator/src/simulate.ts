import {
  type BirdBox,
  type Course,
  DEFAULT_BIRD,
  DEFAULT_VIEWPORT,
  TICK_MS,
  type Viewport,
  applyInputInPlace,
  createGame,
  snapshotCourse,
  stepInPlace,
} from "@flaplab/physics";
import { type Trace, replayFlapTicks } from "@flaplab/input-traces";
import { generateWorld } from "@flaplab/worldgen";

export interface GameOutcome {
  readonly score: number;
  /** Ticks played: the tick of the game-over frame. */
  readonly ticks: number;
  /** The bird hit a pipe. */
  readonly died: boolean;
  /** The course ran out (see @flaplab/physics). */
  readonly courseEnd: boolean;
}

export interface SimulationResult extends GameOutcome {
  readonly seed: bigint;
}

export interface SimulateOptions {
  readonly seed: bigint;
  /** Ticks before which a flap is applied (1 = the first tick). Any order; repeats count once. */
  readonly flapTicks: readonly number[];
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
}

function sortedTicks(flapTicks: readonly number[]): number[] {
  for (const k of flapTicks) {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`flap ticks must be integers ≥ 1, got ${k}`);
  }
  return [...new Set(flapTicks)].sort((a, b) => a - b);
}

/**
 * Plays a game on `course` by tick index: the start press, then tick after tick with a flap before
 * each tick in `flapTicks`, until the game is over. Always ends: a course has finitely many pipes.
 */
export function simulateCourse(course: Course, flapTicks: readonly number[], bird: BirdBox = DEFAULT_BIRD): GameOutcome {
  const ticks = sortedTicks(flapTicks);
  const state = createGame(course, bird);
  applyInputInPlace(state);
  let next = 0;
  while (state.phase === "playing") {
    const tick = state.tick + 1;
    let flap = false;
    while (next < ticks.length && (ticks[next] as number) <= tick) {
      flap ||= ticks[next] === tick;
      next++;
    }
    stepInPlace(state, flap);
  }
  return { score: state.score, ticks: state.tick, died: state.died, courseEnd: state.courseEnd };
}

/** The world FlappyGo generates for `seed` in `viewport` (480×640 by default), as the engine plays it. */
export function courseFor(seed: bigint, viewport: Viewport = DEFAULT_VIEWPORT): Course {
  return snapshotCourse(generateWorld(seed, viewport));
}

/** `simulateCourse` on the world FlappyGo generates for `seed` (viewport 480×640 by default). */
export function simulate(options: SimulateOptions): SimulationResult {
  const world = generateWorld(options.seed, options.viewport ?? DEFAULT_VIEWPORT);
  const outcome = simulateCourse(world, options.flapTicks, options.bird ?? DEFAULT_BIRD);
  return { seed: options.seed, ...outcome };
}

/**
 * Replays a trace by tick index (`replayFlapTicks`): on `seed`, else the trace's seed, with the
 * trace's viewport and bird when it has them.
 */
export function simulateTrace(trace: Trace, options: { seed?: bigint; tickMs?: number } = {}): SimulationResult {
  const seed = options.seed ?? trace.seed;
  if (seed === undefined) throw new RangeError("no seed: the trace has none and none was given");
  return simulate({
    seed,
    flapTicks: replayFlapTicks(trace, options.tickMs ?? TICK_MS),
    ...(trace.viewport ? { viewport: trace.viewport } : {}),
    ...(trace.bird ? { bird: trace.bird } : {}),
  });
}

/** The CLI's output line: `{"seed":"<int64>","score":n,"ticks":n}` (the seed exceeds 2^53). */
export function formatResult(result: SimulationResult): string {
  return JSON.stringify({ seed: result.seed.toString(), score: result.score, ticks: result.ticks });
}
