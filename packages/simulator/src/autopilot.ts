import {
  BIRD_X,
  type BirdBox,
  type Course,
  DEFAULT_BIRD,
  DEFAULT_VIEWPORT,
  FLAP_VELOCITY,
  GRAVITY,
  PIPE_WIDTH,
  START_BIRD_Y,
  TICK_MS,
  type Viewport,
  applyInputInPlace,
  createGame,
  snapshotCourse,
  stepInPlace,
  tickInPlace,
  validateCourse,
} from "@flaplab/physics";
import { type Trace, serializeFlapLabTrace } from "@flaplab/traces";
import { generateWorld } from "@flaplab/worldgen";
import { type GameOutcome, simulateCourse } from "./simulate.js";

export interface PlanOptions {
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
  /** Points to reach before the bird is let die at the next pipe (default 30). */
  readonly targetScore?: number;
  /** How many ticks each flap may land early or late without changing the outcome (default 2). */
  readonly robustTicks?: number;
  /** Longest game to plan, in ticks; the target is lowered to the highest score that fits. */
  readonly maxTicks?: number;
}

export interface GamePlan extends GameOutcome {
  /** Ticks before which to flap (ascending; 1 = the first tick after the start press). */
  readonly flapTicks: number[];
  /** The score the plan was made for: `targetScore`, or less when that could not be reached. */
  readonly targetScore: number;
  /** The shift every flap was verified to tolerate, ≤ the requested `robustTicks`. */
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

const DEFAULT_TARGET = 30;
const DEFAULT_ROBUST = 2;
/** Margin (px) the first search asks for; 0 when that fails, raised while searches succeed. */
const FIRST_MARGIN = 8;
/** Searches per target score. */
const MAX_SEARCHES = 4;
/** Nodes kept per flap tick. */
const BEAM = 160;
/** Margin above the required one beyond which nodes rank by drift alone. */
const RANK_CAP = 8;
/** Bucket for de-duplicating the nodes of one tick: bird y, px. */
const Y_BUCKET = 3;

/**
 * Where the pipes are on every tick, independent of the bird: the corridor its top edge must stay
 * in (`lo ≤ y` and `y + birdHeight ≤ hi`; ±Infinity when no pipe overlaps it) and the score.
 */
interface Timeline {
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  /** Score after tick t (index 0 = before tick 1). */
  readonly score: Int32Array;
  /** Ticks computed; the last one may be the course end. */
  readonly length: number;
  /** Tick at which the course ends, or Infinity within `length`. */
  readonly courseEndTick: number;
}

/**
 * Plays the course with a bird whose y is NaN (every comparison false, so it never collides):
 * the physics' own pipe motion, score and speed ramp, then the corridor per tick from the
 * same overlap test the physics uses.
 */
export function buildTimeline(course: Course, bird: BirdBox, maxTicks: number): Timeline {
  const state = createGame(course, bird);
  applyInputInPlace(state);
  state.birdY = Number.NaN;
  const lo: number[] = [Number.NEGATIVE_INFINITY];
  const hi: number[] = [Number.POSITIVE_INFINITY];
  const score: number[] = [0];
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
    if (state.courseEnd) courseEndTick = state.tick;
  }
  return {
    lo: Float64Array.from(lo),
    hi: Float64Array.from(hi),
    score: Int32Array.from(score),
    length: state.tick,
    courseEndTick,
  };
}

/** What a plan for one target score must achieve. */
interface Goal {
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

/** Search node: the bird just before its latest flap (or before tick 1 for the root). */
interface Node {
  /** Tick the latest flap is applied before (1 for the root, which has not flapped). */
  readonly m: number;
  readonly flapped: boolean;
  readonly y: number;
  readonly v: number;
  /** State before tick m-R (free flight since, so the states up to m follow), for the flap moved earlier. */
  readonly hy: number;
  readonly hv: number;
  /** Offsets of the trajectory caused by moving any earlier flap (min ≤ 0 ≤ max). */
  readonly emin: number;
  readonly emax: number;
  /** Sum over flaps of the largest squared offset moving that flap causes. */
  readonly drift: number;
  /** Smallest clearance so far over all variants. */
  readonly margin: number;
  readonly parent: Node | undefined;
}

interface SearchResult {
  readonly flapTicks: number[];
  readonly margin: number;
}

interface Terminal {
  readonly node: Node;
  readonly margin: number;
}

function flapsOf(node: Node): number[] {
  const ticks: number[] = [];
  for (let n: Node | undefined = node; n !== undefined; n = n.parent) if (n.flapped) ticks.push(n.m);
  return ticks.reverse();
}

/** Clearance of a bird at `y` (top edge) at tick t; negative = it hits a pipe. */
function clearance(tl: Timeline, t: number, y: number, bh: number): number {
  return Math.min(y - (tl.lo[t] as number), (tl.hi[t] as number) - (y + bh));
}

/** How far outside the gap the bird is at tick t; negative = inside it. */
function depth(tl: Timeline, t: number, y: number, bh: number): number {
  return Math.max((tl.lo[t] as number) - y, y + bh - (tl.hi[t] as number));
}

/**
 * Beam search over flap ticks. Each node is the bird just before a flap; expanding it plays the
 * flap and the free flight after it once, with the 2R variants where that flap lands early or
 * late, and offers every later tick as the next flap. A moved flap only offsets the trajectory
 * once the next flap resets the velocity, so older flaps are kept as an offset envelope.
 */
export function search(tl: Timeline, goal: Goal, bh: number, R: number, minMargin: number, yLimit: number): { found?: SearchResult; reach: number } {
  const yMin = -yLimit;
  const bins = Math.ceil((2 * yLimit) / Y_BUCKET) + 2;
  const layers: (Array<Node | undefined> | undefined)[] = new Array(goal.endTick + 2);
  const root: Node = {
    m: 1, flapped: false, y: START_BIRD_Y, v: 0, hy: START_BIRD_Y, hv: 0, emin: 0, emax: 0, drift: 0, margin: Number.POSITIVE_INFINITY, parent: undefined,
  };
  let best: Terminal | undefined;
  let reach = 0;
  const nv = 2 * R;
  const vy = new Float64Array(nv);
  const vv = new Float64Array(nv);
  const histY = new Float64Array(tl.length + 2);
  const histV = new Float64Array(tl.length + 2);

  // Rank: margin (capped, so that beyond the target level the other terms decide) minus the
  // typical offset that many flaps moved at once would add up to.
  const capAt = minMargin + RANK_CAP;
  const rank = (margin: number, drift: number): number => Math.min(margin, capAt) - Math.sqrt(drift);

  const expand = (n: Node): void => {
    const m = n.m;
    // Variant i < R: the flap moved earlier by R - i ticks; i ≥ R: later by i - R + 1 ticks.
    let seg = Number.POSITIVE_INFINITY;
    if (n.flapped) {
      for (let i = 0; i < R; i++) {
        const s = i - R;
        // Free flight from the state before tick m-R to the one before tick m+s, then the flap.
        let y = n.hy;
        let v = n.hv;
        for (let t = m - R; t < m + s; t++) {
          v += GRAVITY;
          y += v;
        }
        v = -FLAP_VELOCITY;
        for (let t = m + s; t < m; t++) {
          v += GRAVITY;
          y += v;
          if (t <= goal.endTick) seg = Math.min(seg, clearance(tl, t, y, bh));
        }
        vy[i] = y;
        vv[i] = v;
      }
      for (let i = R; i < nv; i++) {
        vy[i] = n.y;
        vv[i] = n.v;
      }
    }
    let margin = Math.min(n.margin, seg);
    if (margin < minMargin) return;
    let y = n.y;
    let v = n.flapped ? -FLAP_VELOCITY : n.v;
    const first = n.flapped ? m + R + 1 : R + 1;
    for (let t = m; ; t++) {
      // (y, v) is the state before tick t: offer a flap here.
      histY[t] = y;
      histV[t] = v;
      if (t >= first && t <= goal.endTick && y < yLimit && y > -yLimit) {
        let emin = n.emin;
        let emax = n.emax;
        let worst = 0;
        if (n.flapped) {
          for (let i = 0; i < nv; i++) {
            const d = (vy[i] as number) - y;
            if (d < emin) emin = d;
            if (d > emax) emax = d;
            if (d * d > worst) worst = d * d;
          }
        }
        const drift = n.drift + worst;
        let layer = layers[t];
        if (layer === undefined) {
          layer = new Array<Node | undefined>(bins).fill(undefined);
          layers[t] = layer;
        }
        const key = Math.round((y - yMin) / Y_BUCKET);
        const old = layer[key];
        if (old === undefined || rank(margin, drift) > rank(old.margin, old.drift)) {
          const hy = histY[t - R] as number;
          const hv = histV[t - R] as number;
          layer[key] = { m: t, flapped: true, y, v, hy, hv, emin, emax, drift, margin, parent: n };
        }
      }
      if (t > tl.length) return;
      // Tick t.
      v += GRAVITY;
      y += v;
      if (n.flapped) {
        for (let i = 0; i < nv; i++) {
          if (i >= R && t === m + (i - R + 1)) vv[i] = -FLAP_VELOCITY;
          vv[i] = (vv[i] as number) + GRAVITY;
          vy[i] = (vy[i] as number) + (vv[i] as number);
        }
      }
      if (t <= goal.endTick) {
        let c = Math.min(y + n.emin - (tl.lo[t] as number), (tl.hi[t] as number) - (y + n.emax + bh));
        for (let i = 0; i < (n.flapped ? nv : 0); i++) c = Math.min(c, clearance(tl, t, vy[i] as number, bh));
        if (c < margin) margin = c;
        if (margin < minMargin) return;
        const sc = tl.score[t] as number;
        if (sc > reach) reach = sc;
      }
      if (t === goal.endTick) break;
    }
    // Free flight from this node's flap reaches the goal: a candidate end of the game.
    if (goal.deathTick !== undefined) {
      for (let t = goal.endTick + 1; t <= goal.deathTick; t++) {
        v += GRAVITY;
        y += v;
        if (n.flapped) {
          for (let i = 0; i < nv; i++) {
            if (i >= R && t === m + (i - R + 1)) vv[i] = -FLAP_VELOCITY;
            vv[i] = (vv[i] as number) + GRAVITY;
            vy[i] = (vy[i] as number) + (vv[i] as number);
          }
        }
      }
      const t = goal.deathTick;
      // The whole offset envelope must be on one side of the gap.
      let d = Math.max((tl.lo[t] as number) - (y + n.emax), y + n.emin + bh - (tl.hi[t] as number));
      for (let i = 0; i < (n.flapped ? nv : 0); i++) d = Math.min(d, depth(tl, t, vy[i] as number, bh));
      margin = Math.min(margin, d);
      if (margin < minMargin) return;
    }
    if (best === undefined || margin > best.margin) best = { node: n, margin };
  };

  expand(root);
  for (let t = 1; t <= goal.endTick; t++) {
    const layer = layers[t];
    if (layer === undefined) continue;
    layers[t] = undefined;
    let nodes = layer.filter((n): n is Node => n !== undefined);
    if (nodes.length > BEAM) {
      nodes.sort((a, b) => rank(b.margin, b.drift) - rank(a.margin, a.drift));
      nodes = nodes.slice(0, BEAM);
    }
    for (const n of nodes) expand(n);
  }
  const found = best as Terminal | undefined;
  return found ? { found: { flapTicks: flapsOf(found.node), margin: found.margin }, reach } : { reach };
}

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

interface Resolved {
  readonly course: Course;
  readonly bird: BirdBox;
  readonly target: number;
  readonly robust: number;
  readonly maxTicks: number;
}

function resolve(seed: bigint, opts: PlanOptions): Resolved {
  const target = opts.targetScore ?? DEFAULT_TARGET;
  const robust = opts.robustTicks ?? DEFAULT_ROBUST;
  const maxTicks = opts.maxTicks ?? Number.POSITIVE_INFINITY;
  if (!Number.isInteger(target) || target < 0) throw new RangeError(`targetScore must be an integer ≥ 0, got ${target}`);
  if (!Number.isInteger(robust) || robust < 0 || robust > 10) throw new RangeError(`robustTicks must be an integer in 0…10, got ${robust}`);
  if (maxTicks !== Number.POSITIVE_INFINITY && (!Number.isInteger(maxTicks) || maxTicks < 1)) {
    throw new RangeError(`maxTicks must be an integer ≥ 1, got ${maxTicks}`);
  }
  const bird = opts.bird ?? DEFAULT_BIRD;
  const course = snapshotCourse(generateWorld(seed, opts.viewport ?? DEFAULT_VIEWPORT));
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
  const yLimit = r.course.viewport.height * 2;
  let target = r.target;
  for (;;) {
    let goal = goalFor(tl, target);
    while (goal === undefined && target > 0) goal = goalFor(tl, --target);
    if (goal === undefined) throw new RangeError(`no game fits in ${r.maxTicks} ticks`);
    let best: { flapTicks: number[]; check: PlanCheck } | undefined;
    let reach = 0;
    let level = FIRST_MARGIN;
    for (let i = 0; i < MAX_SEARCHES; i++) {
      const res = search(tl, goal, r.bird.height, r.robust, level, yLimit);
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
    if (goal.target === 0) throw new Error("no robust schedule found, not even for score 0");
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

export interface TraceOptions {
  /** Tick period in ms (default 33). */
  readonly tickMs?: number;
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
  /** ISO 8601 time for `recordedAt`; left out when not given. */
  readonly recordedAt?: string;
}

/**
 * A plan as a FlapLab trace (`flaplab-trace/1`): each flap pressed in the middle of the tick
 * period before its tick, `t = (tick - 1) * tickMs + floor(tickMs / 2)` ms after the start press
 * (16 ms into the period at 33 ms), with the planned tick recorded.
 */
export function planTrace(seed: bigint, plan: Pick<GamePlan, "flapTicks">, opts: TraceOptions = {}): Trace {
  const tickMs = opts.tickMs ?? TICK_MS;
  if (!Number.isInteger(tickMs) || tickMs < 2) throw new RangeError(`tickMs must be an integer ≥ 2, got ${tickMs}`);
  const ticks = [...new Set(plan.flapTicks)].sort((a, b) => a - b);
  for (const k of ticks) if (!Number.isInteger(k) || k < 1) throw new RangeError(`flap ticks must be integers ≥ 1, got ${k}`);
  const half = Math.floor(tickMs / 2);
  return {
    format: "flaplab-json",
    seed,
    viewport: opts.viewport ?? DEFAULT_VIEWPORT,
    bird: opts.bird ?? DEFAULT_BIRD,
    startMs: 0,
    flapOffsetsMs: ticks.map((k) => (k - 1) * tickMs + half),
    recordedTicks: ticks,
    dropLastInput: false,
    ...(opts.recordedAt !== undefined ? { recordedAt: opts.recordedAt } : {}),
    source: "autopilot",
  };
}

/** `planTrace` as the text of a FlapLab JSON trace file. */
export function traceFromPlan(seed: bigint, plan: Pick<GamePlan, "flapTicks">, opts: TraceOptions = {}): string {
  return serializeFlapLabTrace(planTrace(seed, plan, opts));
}
