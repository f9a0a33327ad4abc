// FlappyGo's world generator (backend/world_gen/worldgen.go), statement for
// statement: Go int32 arithmetic with truncating division, and Go math/rand v1
// seeded with the world seed, so a seed gives Go's exact pipes.

import { Rand } from "@flaplab/go-rand";

/** Pipes in every world (Go's PipesToGenerate). */
export const PIPES_PER_WORLD = 100;

export interface ViewportSize {
  width: number;
  height: number;
}

/** One pipe's opening, in px from the top of the viewport. */
export interface PipeSpec {
  gapStart: number;
  gapHeight: number;
}

export interface WorldSpec {
  seed: bigint;
  viewport: ViewportSize;
  /** Horizontal gap in px between one pipe's right edge and the next pipe's left edge. */
  pipeSpacing: number;
  pipes: PipeSpec[];
}

type Clearance = "up" | "center" | "bottom";

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** Go int32 `a / b`: truncates toward zero, wraps on overflow. */
function div(a: number, b: number): number {
  return (a / b) | 0;
}

/** Go int32 `a * b`, wrapping. */
const mul = Math.imul;

function isInt32(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX;
}

/**
 * The world for `seed` in a `viewport` (FlappyGo's browser always sends 480×640).
 * Throws a RangeError for a non-int32 seed or size, and wherever Go would panic
 * (a viewport too small for `Int31n`, e.g. width < 4).
 */
export function generateWorld(seed: bigint, viewport: ViewportSize): WorldSpec {
  const W = viewport.width;
  const H = viewport.height;
  if (!isInt32(W) || !isInt32(H)) {
    throw new RangeError(`viewport must be int32 width and height, got ${W}x${H}`);
  }
  const r = new Rand(seed);
  const int31n = (n: number): number => {
    if (n <= 0) {
      throw new RangeError(`viewport ${W}x${H} is too small: the generator would draw Int31n(${n})`);
    }
    return r.int31n(n);
  };

  const gap = div(W, 4) + int31n(div(W, 4));
  const thresh = div(mul(2, H), 3);
  const maxHeight = div(mul(1, H), 3);
  let prevClear: Clearance = "up";

  const pipes: PipeSpec[] = [];
  for (let i = 0; i < PIPES_PER_WORLD; i++) {
    let start: number;
    if (prevClear === "center") {
      start = div(H, 9) + int31n(thresh);
    } else if (prevClear === "bottom") {
      start = div(mul(4, H), 9) + int31n(div(mul(3, H), 9));
    } else {
      start = div(H, 9) + int31n(div(mul(7, H), 18));
    }
    start |= 0;

    prevClear = start < div(H, 3) ? "up" : start > div(mul(2, H), 3) ? "bottom" : "center";

    const remaining = (H - start) | 0;
    let height: number;
    if (remaining < thresh) {
      height = div(mul(2, remaining), 3) + int31n(div(remaining, 6));
    } else if (remaining > maxHeight) {
      height = div(remaining, 4) + int31n(div(remaining, 4));
    } else {
      height = div(remaining, 2) + int31n(div(remaining, 2));
    }
    height |= 0;

    pipes.push({ gapStart: start, gapHeight: height });
  }

  return { seed, viewport: { width: W, height: H }, pipeSpacing: gap | 0, pipes };
}

/** A crypto-random positive int64 seed, in [1, 2**63 - 1]. */
export function randomSeed(): bigint {
  const buf = new BigUint64Array(1);
  for (;;) {
    globalThis.crypto.getRandomValues(buf);
    const seed = buf[0]! & 0x7fffffffffffffffn;
    if (seed !== 0n) return seed;
  }
}
