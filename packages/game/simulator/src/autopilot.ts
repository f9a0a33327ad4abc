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
import { FLAPLAB_TRACE_FORMAT, type Trace } from "@flaplab/input-traces";
import { generateWorld } from "@flaplab/worldgen";
import { type GameOutcome, simulateCourse } from "./simulate.js";

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
/** Nodes kept per flap tick. */
const BEAM = 160;
/** px above the required margin beyond which more margin no longer ranks a node higher. */
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
  /** Tick at which the course ends, or Infinity when it does not end within `length` ticks. */
  readonly courseEndTick: number;
}

/**
 * Plays the course with a bird whose y is NaN (every comparison false, so it never collides):
 * the physics' own pipe motion, score and speed ramp, then the corridor per tick from the
 * same overlap test the physics uses.
 */
function buildTimeline(course: Course, bird: BirdBox, maxTicks: number): Timeline {
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

function goalFor(tl: Timeline, target: number): Goal | undefined {
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
/**
 * Tick t for the k offset variants of a flap at tick m: variant i ≥ R flaps late, at m + (i - R + 1),
 * the others have flapped already; each falls by one tick.
 */
function stepOffsets(vy: Float64Array, vv: Float64Array, k: number, R: number, t: number, m: number): void {
  for (let i = 0; i < k; i++) {
    if (i >= R && t === m + (i - R + 1)) vv[i] = FLAP_V;
    vv[i] = (vv[i] as number) + G;
    vy[i] = (vy[i] as number) + (vv[i] as number);
  }
}

function clearance(tl: Timeline, t: number, y: number, bh: number): number {
  return Math.min(y - (tl.lo[t] as number), (tl.hi[t] as number) - (y + bh));
}

/** How far outside the gap the bird is at tick t; negative = inside it. */
function depth(tl: Timeline, t: number, y: number, bh: number): number {
  return Math.max((tl.lo[t] as number) - y, y + bh - (tl.hi[t] as number));
}

// Local copies for the hot loop: some loaders (vitest) turn imported bindings into property reads.
const G = GRAVITY;
const FLAP_V = -FLAP_VELOCITY;

/** Node fields, one Float64Array each per slot (see `search`). */
const F_Y = 0; // bird y before tick m (the tick the flap is applied before)
const F_V = 1; // its velocity
const F_HY = 2; // state before tick m-R: free flight since, so the flap can be replayed earlier
const F_HV = 3;
const F_EMIN = 4; // offsets of the trajectory caused by moving any earlier flap (min ≤ 0 ≤ max)
const F_EMAX = 5;
const F_DRIFT = 6; // sum over flaps of the largest squared offset moving that flap causes
const F_MARGIN = 7; // smallest clearance so far over all variants
const F_PARENT = 8; // arena index of the node this flap follows
const FIELDS = 9;
/** Ticks ahead a node may place its successor; a free fall dies at a pipe long before. */
const RING = 256;

interface SearchOutcome {
  /** The best schedule found, with its margin as estimated by the search. */
  readonly found?: { readonly flapTicks: number[]; readonly margin: number };
  /** Highest score any surviving branch reached. */
  readonly reach: number;
}

/**
 * Beam search over flap ticks, for a schedule whose clearance (every variant) stays ≥ minMargin.
 * A node is the bird just before a flap at tick m. Expanding it plays the flap and the free flight
 * after it once, in lockstep with the 2R variants where that flap lands up to R ticks early or
 * late, and offers every later tick as the next flap. A moved flap only offsets the trajectory
 * once the next flap resets the velocity, so older flaps live on as an offset envelope. The nodes
 * of one tick are de-duplicated by bird y (Y_BUCKET px) and cut to the BEAM best.
 */
function search(tl: Timeline, goal: Goal, bh: number, R: number, minMargin: number, yRange: readonly [number, number]): SearchOutcome {
  const [yLo, yHi] = yRange;
  const bins = Math.ceil((yHi - yLo) / Y_BUCKET) + 1;
  const ring = new Float64Array(RING * bins * FIELDS);
  // Rank of each slot, -Infinity when empty (kept apart: it is read on every offer).
  const ranks = new Float64Array(RING * bins).fill(Number.NEGATIVE_INFINITY);
  const used = new Uint8Array(RING);
  // Expanded nodes: flap tick and parent, to read the schedule back.
  let arenaTick = new Int32Array(4096);
  let arenaParent = new Int32Array(4096);
  let arenaSize = 0;
  const capAt = minMargin + RANK_CAP;
  const nv = 2 * R;
  const vy = new Float64Array(nv);
  const vv = new Float64Array(nv);
  const histY = new Float64Array(tl.length + 2);
  const histV = new Float64Array(tl.length + 2);
  const node = new Float64Array(FIELDS);
  let bestArena = -2;
  let bestMargin = Number.NEGATIVE_INFINITY;
  let reach = 0;

  const remember = (m: number, parent: number): number => {
    if (arenaSize === arenaTick.length) {
      const t = new Int32Array(arenaSize * 2);
      t.set(arenaTick);
      arenaTick = t;
      const p = new Int32Array(arenaSize * 2);
      p.set(arenaParent);
      arenaParent = p;
    }
    arenaTick[arenaSize] = m;
    arenaParent[arenaSize] = parent;
    return arenaSize++;
  };

  /** Expands the node in `node` (flap before tick m; m = 1 and !flapped for the root). */
  const expand = (m: number, flapped: boolean, self: number): void => {
    const emin0 = node[F_EMIN] as number;
    const emax0 = node[F_EMAX] as number;
    const drift0 = node[F_DRIFT] as number;
    let margin = node[F_MARGIN] as number;
    // Variant i < R: the flap moved earlier by R - i ticks; i ≥ R: later by i - R + 1 ticks.
    if (flapped) {
      for (let i = 0; i < R; i++) {
        const s = i - R;
        let y = node[F_HY] as number;
        let v = node[F_HV] as number;
        for (let t = m - R; t < m + s; t++) {
          v += G;
          y += v;
        }
        v = FLAP_V;
        for (let t = m + s; t < m; t++) {
          v += G;
          y += v;
          if (t <= goal.endTick) margin = Math.min(margin, clearance(tl, t, y, bh));
        }
        vy[i] = y;
        vv[i] = v;
      }
      for (let i = R; i < nv; i++) {
        vy[i] = node[F_Y] as number;
        vv[i] = node[F_V] as number;
      }
    }
    if (margin < minMargin) return;
    const k = flapped ? nv : 0;
    let y = node[F_Y] as number;
    let v = flapped ? FLAP_V : (node[F_V] as number);
    const first = flapped ? m + R + 1 : R + 1;
    const lastChild = Math.min(goal.endTick, m + RING - 1);
    for (let t = m; ; t++) {
      // (y, v) is the state before tick t: offer a flap here.
      histY[t] = y;
      histV[t] = v;
      if (t >= first && t <= lastChild && y >= yLo && y <= yHi) {
        let emin = emin0;
        let emax = emax0;
        let worst = 0;
        for (let i = 0; i < k; i++) {
          const d = (vy[i] as number) - y;
          if (d < emin) emin = d;
          if (d > emax) emax = d;
          if (d * d > worst) worst = d * d;
        }
        const drift = drift0 + worst;
        // Rank: the margin, capped so that beyond the level asked for the other term decides,
        // minus the offset that many flaps moved at once would typically add up to.
        const rank = Math.min(margin, capAt) - Math.sqrt(drift);
        const layer = t % RING;
        const slot = layer * bins + Math.round((y - yLo) / Y_BUCKET);
        if (rank > (ranks[slot] as number)) {
          const at = slot * FIELDS;
          ranks[slot] = rank;
          ring[at + F_Y] = y;
          ring[at + F_V] = v;
          ring[at + F_HY] = histY[t - R] as number;
          ring[at + F_HV] = histV[t - R] as number;
          ring[at + F_EMIN] = emin;
          ring[at + F_EMAX] = emax;
          ring[at + F_DRIFT] = drift;
          ring[at + F_MARGIN] = margin;
          ring[at + F_PARENT] = self;
          used[layer] = 1;
        }
      }
      if (t > goal.endTick) break;
      // Tick t.
      v += G;
      y += v;
      stepOffsets(vy, vv, k, R, t, m);
      const lo = tl.lo[t] as number;
      const hi = tl.hi[t] as number;
      if (lo !== Number.NEGATIVE_INFINITY || hi !== Number.POSITIVE_INFINITY) {
        let c = Math.min(y + emin0 - lo, hi - (y + emax0 + bh));
        for (let i = 0; i < k; i++) c = Math.min(c, clearance(tl, t, vy[i] as number, bh));
        if (c < margin) margin = c;
        if (margin < minMargin) return;
      }
      const sc = tl.score[t] as number;
      if (sc > reach) reach = sc;
    }
    // Free flight from this node's flap reaches the goal: a candidate end of the game.
    if (goal.deathTick !== undefined) {
      for (let t = goal.endTick + 1; t <= goal.deathTick; t++) {
        v += G;
        y += v;
        stepOffsets(vy, vv, k, R, t, m);
      }
      const t = goal.deathTick;
      // The whole offset envelope must be on one side of the gap.
      let d = Math.max((tl.lo[t] as number) - (y + emax0), y + emin0 + bh - (tl.hi[t] as number));
      for (let i = 0; i < k; i++) d = Math.min(d, depth(tl, t, vy[i] as number, bh));
      margin = Math.min(margin, d);
      if (margin < minMargin) return;
    }
    if (margin > bestMargin) {
      bestMargin = margin;
      bestArena = self;
    }
  };

  node.fill(0);
  node[F_Y] = START_BIRD_Y;
  node[F_HY] = START_BIRD_Y;
  node[F_MARGIN] = Number.POSITIVE_INFINITY;
  expand(1, false, -1);
  const order: number[] = [];
  for (let t = 1; t <= goal.endTick; t++) {
    const layer = t % RING;
    if (!used[layer]) continue;
    used[layer] = 0;
    const base = layer * bins;
    order.length = 0;
    for (let b = base; b < base + bins; b++) if ((ranks[b] as number) > Number.NEGATIVE_INFINITY) order.push(b);
    if (order.length > BEAM) {
      order.sort((a, b) => (ranks[b] as number) - (ranks[a] as number));
      for (let i = BEAM; i < order.length; i++) ranks[order[i] as number] = Number.NEGATIVE_INFINITY;
      order.length = BEAM;
    }
    for (const slot of order) {
      const at = slot * FIELDS;
      node.set(ring.subarray(at, at + FIELDS));
      ranks[slot] = Number.NEGATIVE_INFINITY;
      expand(t, true, remember(t, node[F_PARENT] as number));
    }
  }
  if (bestArena === -2) return { reach };
  const flapTicks: number[] = [];
  for (let i = bestArena; i >= 0; i = arenaParent[i] as number) flapTicks.push(arenaTick[i] as number);
  return { found: { flapTicks: flapTicks.reverse(), margin: bestMargin }, reach };
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
  const target = opts.targetScore ?? DEFAULT_TARGET_SCORE;
  const robust = opts.robustTicks ?? DEFAULT_ROBUST_TICKS;
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

/**
 * `planTrace` as the text of a FlapLab JSON trace file, one input per line, with
 * `"dropLastInput": false` spelled out: the last flap counts.
 */
export function traceFromPlan(seed: bigint, plan: Pick<GamePlan, "flapTicks">, opts: TraceOptions = {}): string {
  const trace = planTrace(seed, plan, opts);
  const head: Record<string, unknown> = {
    format: FLAPLAB_TRACE_FORMAT,
    seed: seed.toString(),
    viewport: trace.viewport,
    bird: trace.bird,
    dropLastInput: false,
    ...(trace.recordedAt !== undefined ? { recordedAt: trace.recordedAt } : {}),
    source: trace.source,
  };
  const fields = Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const ticks = trace.recordedTicks ?? [];
  const inputs = trace.flapOffsetsMs.map((t, i) => JSON.stringify({ t, tick: ticks[i] }));
  const list = inputs.length === 0 ? "[]" : `[\n    ${inputs.join(",\n    ")}\n  ]`;
  return `{\n${[...fields, `  "inputs": ${list}`].join(",\n")}\n}\n`;
}

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
