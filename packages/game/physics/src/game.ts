import {
  BIRD_X,
  type BirdBox,
  DEFAULT_BIRD,
  FLAP_VELOCITY,
  GRAVITY,
  MAX_PIPE_SPEED,
  PIPE_SPEED_STEP,
  PIPE_WIDTH,
  START_BIRD_Y,
  START_PIPE_SPEED,
  type Viewport,
} from "./constants.js";

/** One pipe's opening, px from the top of the viewport. */
export interface PipeGap {
  readonly gapStart: number;
  readonly gapHeight: number;
}

/** The pipe course a game is played on: what the world generator produces. */
export interface Course {
  /** Horizontal gap in px between one pipe's right edge and the next pipe's left edge. */
  readonly pipeSpacing: number;
  readonly pipes: readonly PipeGap[];
  readonly viewport: Viewport;
}

export type Phase = "ready" | "playing" | "over";

/**
 * The whole state of one game. `stepInPlace`/`applyInputInPlace` mutate it; `step`/`applyInput`
 * return a changed copy. `course` and `bird` are frozen snapshots shared by all copies.
 */
export interface GameState {
  readonly course: Course;
  readonly bird: BirdBox;
  /** FlappyGo's pipesToRender: how many pipes each tick looks at and each frame shows. */
  readonly pipesInView: number;
  phase: Phase;
  /** Ticks played so far; the tick being shown by the latest frame. Advances only while playing. */
  tick: number;
  /** Top of the bird's box, px from the top. */
  birdY: number;
  /** px/tick, positive downwards. */
  birdVelocity: number;
  pipeSpeed: number;
  /** World x (px) at the viewport's left edge. */
  pipeWindowX: number;
  /** Index of the first pipe whose right edge has not yet passed x = 0 (FlappyGo's prevClosestPipe). */
  closestPipe: number;
  score: number;
  /** The game ended by hitting a pipe. */
  died: boolean;
  /** The game ended because the course ran out (where FlappyGo crashed with an index panic). */
  courseEnd: boolean;
}

/** What happened in one step. Instances are shared and frozen: compare fields, not identity. */
export interface StepEvents {
  /** A tick was computed (the game was playing). */
  readonly ticked: boolean;
  /** The score went up this tick. */
  readonly scored: boolean;
  /** The bird hit a pipe this tick. */
  readonly died: boolean;
  /** The course ran out this tick; the game is over. */
  readonly courseEnd: boolean;
}

export interface PipeInView {
  /** Index of the pipe in the course. */
  readonly index: number;
  /** Left edge in viewport px. */
  readonly x: number;
  readonly gapStart: number;
  readonly gapHeight: number;
}

/** What a frame shows after a tick (FlappyGo's GenerateFrameReq, plus tick and velocity). */
export interface FrameView {
  readonly tick: number;
  readonly phase: Phase;
  readonly birdX: number;
  readonly birdY: number;
  readonly birdVelocity: number;
  readonly score: number;
  readonly pipeWidth: number;
  /**
   * Pipes `closestPipe … closestPipe + pipesInView - 1`. Always `pipesInView` long, except on the
   * course-end frame, which lists only the pipes that exist.
   */
  readonly pipes: readonly PipeInView[];
  readonly gameOver: boolean;
  readonly courseEnd: boolean;
}

export type InputEffect = "started" | "flap" | "ignored";

const EVENTS: readonly StepEvents[] = Array.from({ length: 16 }, (_, i) =>
  Object.freeze({ ticked: (i & 1) !== 0, scored: (i & 2) !== 0, died: (i & 4) !== 0, courseEnd: (i & 8) !== 0 }),
);
const NO_TICK = EVENTS[0] as StepEvents;

/**
 * FlappyGo's pipesToRender: `int(float64(W)*3) / (72 + int(pipe_spacing))`, integer division.
 * 5 for the 480-wide viewport with spacing 191, 4 with spacing 228.
 */
export function pipesInView(viewportWidth: number, pipeSpacing: number): number {
  return Math.trunc(Math.trunc(viewportWidth * 3) / (PIPE_WIDTH + Math.trunc(pipeSpacing)));
}

const MAX_DIMENSION = 1 << 16;

function isDimension(v: number): boolean {
  return Number.isInteger(v) && v >= 1 && v <= MAX_DIMENSION;
}

/**
 * Why a course and bird cannot be played, or undefined when they can. Checks: integer viewport
 * and bird sizes in 1…65536, finite non-negative pipe spacing, finite pipe gaps with a positive
 * height, at least one pipe in view, and at least `pipesInView` pipes.
 */
export function validateCourse(course: Course, bird: BirdBox = DEFAULT_BIRD): string | undefined {
  const { viewport, pipeSpacing, pipes } = course;
  if (!isDimension(viewport.width) || !isDimension(viewport.height)) {
    return `viewport must be whole px in 1…${MAX_DIMENSION}, got ${viewport.width}x${viewport.height}`;
  }
  if (!isDimension(bird.width) || !isDimension(bird.height)) {
    return `bird box must be whole px in 1…${MAX_DIMENSION}, got ${bird.width}x${bird.height}`;
  }
  if (!Number.isFinite(pipeSpacing) || pipeSpacing < 0 || pipeSpacing > MAX_DIMENSION) {
    return `pipe spacing must be a finite number in 0…${MAX_DIMENSION}, got ${pipeSpacing}`;
  }
  const n = pipesInView(viewport.width, pipeSpacing);
  if (n < 1) {
    return `no pipe fits in view: viewport width ${viewport.width} with pipe spacing ${pipeSpacing}`;
  }
  if (pipes.length < n) {
    return `the course needs at least ${n} pipes (pipes in view), got ${pipes.length}`;
  }
  for (let i = 0; i < pipes.length; i++) {
    const p = pipes[i] as PipeGap;
    if (!Number.isFinite(p.gapStart) || !Number.isFinite(p.gapHeight) || p.gapHeight <= 0) {
      return `pipe ${i} has an invalid gap (start ${p.gapStart}, height ${p.gapHeight})`;
    }
  }
  return undefined;
}

const snapshots = new WeakSet<Course>();

/**
 * A frozen copy of a course holding only what the physics reads, or the course itself when it
 * already is one. Games created from the same snapshot share it instead of copying the pipes.
 * Does not validate: `createGame` does.
 */
export function snapshotCourse(course: Course): Course {
  if (snapshots.has(course)) return course;
  const snapshot: Course = Object.freeze({
    pipeSpacing: course.pipeSpacing,
    viewport: Object.freeze({ width: course.viewport.width, height: course.viewport.height }),
    pipes: Object.freeze(course.pipes.map((p) => Object.freeze({ gapStart: p.gapStart, gapHeight: p.gapHeight }))),
  });
  snapshots.add(snapshot);
  return snapshot;
}

/**
 * A new game in the Ready state. Throws a RangeError when `validateCourse` rejects the
 * input. The course is taken through `snapshotCourse` and the bird copied, so later changes to the
 * arguments cannot affect the game.
 */
export function createGame(course: Course, bird: BirdBox = DEFAULT_BIRD): GameState {
  const problem = validateCourse(course, bird);
  if (problem !== undefined) throw new RangeError(problem);
  const snapshot = snapshotCourse(course);
  return {
    course: snapshot,
    bird: Object.freeze({ width: bird.width, height: bird.height }),
    pipesInView: pipesInView(snapshot.viewport.width, snapshot.pipeSpacing),
    phase: "ready",
    tick: 0,
    birdY: START_BIRD_Y,
    birdVelocity: 0,
    pipeSpeed: START_PIPE_SPEED,
    pipeWindowX: -0.5 * snapshot.viewport.width,
    closestPipe: 0,
    score: 0,
    died: false,
    courseEnd: false,
  };
}

/**
 * A copy that shares only the frozen course and bird. Written out field by field in
 * `createGame`'s order, not spread: a spread copy gets an object shape of its own, and a tick
 * that has seen both shapes stores its numbers boxed (≈ 160 bytes of garbage per tick, measured
 * in bench section 3's core work); one shape keeps `tickInPlace` allocation-free.
 */
export function cloneGame(state: GameState): GameState {
  return {
    course: state.course,
    bird: state.bird,
    pipesInView: state.pipesInView,
    phase: state.phase,
    tick: state.tick,
    birdY: state.birdY,
    birdVelocity: state.birdVelocity,
    pipeSpeed: state.pipeSpeed,
    pipeWindowX: state.pipeWindowX,
    closestPipe: state.closestPipe,
    score: state.score,
    died: state.died,
    courseEnd: state.courseEnd,
  };
}

/**
 * One key press: Ready → playing without a flap; playing → a flap: the velocity becomes
 * `-FLAP_VELOCITY` at once, as FlappyGo's engine did on receiving the input (the bird moves at
 * the next tick, which adds gravity and then the velocity; several presses before one tick are
 * one flap); over → ignored.
 */
export function applyInputInPlace(state: GameState): InputEffect {
  switch (state.phase) {
    case "ready":
      state.phase = "playing";
      return "started";
    case "playing":
      state.birdVelocity = -FLAP_VELOCITY;
      return "flap";
    default:
      return "ignored";
  }
}

/** Pure form of `applyInputInPlace`: returns the changed copy and the effect. */
export function applyInput(state: GameState): { state: GameState; effect: InputEffect } {
  const next = cloneGame(state);
  const effect = applyInputInPlace(next);
  return { state: next, effect };
}

/**
 * One engine tick, exactly as FlappyGo's engine, mutating `state`. Does nothing unless playing.
 * Allocates nothing: the returned events object is a shared frozen constant.
 */
export function tickInPlace(state: GameState): StepEvents {
  if (state.phase !== "playing") return NO_TICK;
  state.tick += 1;
  state.birdVelocity += GRAVITY;
  state.birdY += state.birdVelocity;
  state.pipeWindowX += state.pipeSpeed;

  const pwx = state.pipeWindowX;
  const y = state.birdY;
  const bw = state.bird.width;
  const bh = state.bird.height;
  const pipes = state.course.pipes;
  const span = PIPE_WIDTH + state.course.pipeSpacing;
  const n = state.pipesInView;
  let closest = 0;
  let scored = false;
  let died = false;
  let courseEnd = false;
  for (let i = 0; i < n; i++) {
    if (i === 0) {
      closest = Math.trunc(Math.max(0, Math.ceil((pwx - PIPE_WIDTH) / span)));
      if (closest !== state.closestPipe) {
        state.score += 1;
        state.closestPipe = closest;
        scored = true;
      }
    } else {
      closest += 1;
    }
    // FlappyGo indexes past the course here and panics; this ends the game instead.
    if (closest >= pipes.length) {
      courseEnd = true;
      break;
    }
    const pos = closest * span - pwx;
    const spec = pipes[closest] as PipeGap;
    if (
      ((BIRD_X > pos && BIRD_X < pos + PIPE_WIDTH) || (BIRD_X + bw > pos && BIRD_X < pos + PIPE_WIDTH)) &&
      (y < spec.gapStart || y + bh > spec.gapStart + spec.gapHeight)
    ) {
      died = true;
    }
  }
  if (died) {
    state.phase = "over";
    state.died = true;
  }
  if (courseEnd) {
    state.phase = "over";
    state.courseEnd = true;
  } else if (state.score % 5 === 0 && state.pipeSpeed < MAX_PIPE_SPEED) {
    state.pipeSpeed += PIPE_SPEED_STEP;
  }
  return EVENTS[1 | (scored ? 2 : 0) | (died ? 4 : 0) | (courseEnd ? 8 : 0)] as StepEvents;
}

/**
 * Inputs that arrived during one tick period, then the tick: `flap` = at least one key press.
 * In Ready a press starts the game and the same step computes tick 1 (without a flap); pass
 * presses one by one to `applyInputInPlace` when two presses in the Ready period must count as
 * start + flap. Mutates `state`; allocates nothing.
 */
export function stepInPlace(state: GameState, flap: boolean): StepEvents {
  if (flap) applyInputInPlace(state);
  return tickInPlace(state);
}

/** The frame the current state shows. */
export function viewOf(state: GameState): FrameView {
  const pipes: PipeInView[] = [];
  const span = PIPE_WIDTH + state.course.pipeSpacing;
  const last = Math.min(state.closestPipe + state.pipesInView, state.course.pipes.length);
  for (let index = state.closestPipe; index < last; index++) {
    const p = state.course.pipes[index] as PipeGap;
    pipes.push({ index, x: index * span - state.pipeWindowX, gapStart: p.gapStart, gapHeight: p.gapHeight });
  }
  return {
    tick: state.tick,
    phase: state.phase,
    birdX: BIRD_X,
    birdY: state.birdY,
    birdVelocity: state.birdVelocity,
    score: state.score,
    pipeWidth: PIPE_WIDTH,
    pipes,
    gameOver: state.phase === "over",
    courseEnd: state.courseEnd,
  };
}

export interface StepResult {
  readonly state: GameState;
  readonly events: StepEvents;
  readonly view: FrameView;
}

/** Pure form of `stepInPlace`: the input state is not changed. */
export function step(state: GameState, flap: boolean): StepResult {
  const next = cloneGame(state);
  const events = stepInPlace(next, flap);
  return { state: next, events, view: viewOf(next) };
}
