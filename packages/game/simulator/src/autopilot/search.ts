import { FLAP_VELOCITY, GRAVITY, START_BIRD_Y } from "@flaplab/physics";
import { type Goal, type Timeline, clearance, depth } from "./timeline.js";

/** Nodes kept per flap tick. */
const BEAM = 160;
/** px above the required margin beyond which more margin no longer ranks a node higher. */
const RANK_CAP = 8;
/** Bucket for de-duplicating the nodes of one tick: bird y, px. */
const Y_BUCKET = 3;

// Local copies for the hot loop: some loaders (vitest) turn imported bindings into property reads.
const G = GRAVITY;
const FLAP_V = -FLAP_VELOCITY;

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

export interface SearchOutcome {
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
export function search(tl: Timeline, goal: Goal, bh: number, R: number, minMargin: number, yRange: readonly [number, number]): SearchOutcome {
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

