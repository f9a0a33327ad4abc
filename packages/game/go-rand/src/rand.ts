// A port of Go's math/rand v1: rngSource (src/math/rand/rng.go) and the
// Rand methods built on it (src/math/rand/rand.go). Same seed, same numbers.
//
// Each 64-bit state word is kept as two uint32 halves so the hot path
// (Uint64/Int31/Int31n) needs no BigInt; BigInt is used only at the API edge.

import { RNG_COOKED } from "./cooked.js";

const RNG_LEN = 607;
const RNG_TAP = 273;
const INT32_MAX = 0x7fffffff;
const INT32_MAX_BIG = 2147483647n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const TWO_POW_63 = 1n << 63n;

// rngCooked split into halves once, at load.
const COOKED_HI = new Uint32Array(RNG_LEN);
const COOKED_LO = new Uint32Array(RNG_LEN);
for (let i = 0; i < RNG_LEN; i++) {
  const v = BigInt.asUintN(64, RNG_COOKED[i]!);
  COOKED_HI[i] = Number(v >> 32n);
  COOKED_LO[i] = Number(v & 0xffffffffn);
}

/** Go's seedrand: x[n+1] = 48271 * x[n] mod (2**31 - 1), by Schrage's method. */
function seedrand(x: number): number {
  const A = 48271;
  const Q = 44488;
  const R = 3399;
  // x < 2**31: integer division and a product below 2**31, which V8 keeps in int32 arithmetic.
  const hi = (x / Q) | 0;
  const lo = x - hi * Q;
  let next = A * lo - R * hi;
  if (next < 0) next += INT32_MAX;
  return next;
}

function checkInt64(value: bigint, what: string): void {
  if (typeof value !== "bigint" || value < INT64_MIN || value > INT64_MAX) {
    throw new RangeError(`${what} must be an int64 bigint, got ${String(value)}`);
  }
}

/**
 * Go's `rand.New(rand.NewSource(seed))`: the 607-word additive lagged
 * Fibonacci source with the v1 methods on top. Every method consumes exactly
 * the source output Go's would, so call sequences match Go's call for call.
 */
export class Rand {
  private readonly hi = new Uint32Array(RNG_LEN);
  private readonly lo = new Uint32Array(RNG_LEN);
  private tap = 0;
  private feed = RNG_LEN - RNG_TAP;

  constructor(seed: bigint) {
    this.seed(seed);
  }

  /** Go's `Seed(seed int64)`: resets the state to a deterministic function of `seed`. */
  seed(seed: bigint): void {
    checkInt64(seed, "seed");
    this.tap = 0;
    this.feed = RNG_LEN - RNG_TAP;

    // Go's % truncates toward zero, as BigInt's does.
    let s = seed % INT32_MAX_BIG;
    if (s < 0n) s += INT32_MAX_BIG;
    if (s === 0n) s = 89482311n;

    let x = Number(s);
    for (let i = -20; i < RNG_LEN; i++) {
      x = seedrand(x);
      if (i >= 0) {
        // u = x<<40 ^ x'<<20 ^ x'' ^ rngCooked[i], in 64 bits (x < 2**31).
        let hi = x << 8; // bits 40..63 of x<<40; the rest shifts out
        let lo = 0;
        x = seedrand(x);
        hi ^= x >>> 12;
        lo ^= x << 20;
        x = seedrand(x);
        lo ^= x;
        this.hi[i] = hi ^ COOKED_HI[i]!;
        this.lo[i] = lo ^ COOKED_LO[i]!;
      }
    }
  }

  /** Advances the source; the new word is at index `this.feed`. */
  private step(): void {
    if (--this.tap < 0) this.tap += RNG_LEN;
    if (--this.feed < 0) this.feed += RNG_LEN;
    const f = this.feed;
    const t = this.tap;
    const lo = this.lo[f]! + this.lo[t]!;
    // Uint32Array stores reduce mod 2**32, which drops the carry out of each half.
    this.hi[f] = this.hi[f]! + this.hi[t]! + (lo > 0xffffffff ? 1 : 0);
    this.lo[f] = lo;
  }

  /** Go's `Uint64()`: a uniform 64-bit value. */
  uint64(): bigint {
    this.step();
    return (BigInt(this.hi[this.feed]!) << 32n) | BigInt(this.lo[this.feed]!);
  }

  /** Go's `Int63()`: a non-negative 63-bit value. */
  int63(): bigint {
    this.step();
    return (BigInt(this.hi[this.feed]! & INT32_MAX) << 32n) | BigInt(this.lo[this.feed]!);
  }

  /** Go's `Int31()`: `Int63() >> 32`, a non-negative 31-bit value. */
  int31(): number {
    this.step();
    return this.hi[this.feed]! & INT32_MAX;
  }

  /**
   * Go's `Int31n(n)`: a value in [0, n) by rejection sampling (math/rand v1,
   * not the Lemire method of math/rand/v2). Throws if n is not an int32 > 0,
   * where Go panics.
   */
  int31n(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > INT32_MAX) {
      throw new RangeError(`invalid argument to Int31n: ${n} (want an int32 > 0)`);
    }
    if ((n & (n - 1)) === 0) return this.int31() & (n - 1);
    const max = INT32_MAX - (0x80000000 % n);
    let v = this.int31();
    while (v > max) v = this.int31();
    return v % n;
  }

  /** Go's `Int63n(n)`: a value in [0, n) by rejection sampling. Throws if n ≤ 0 or n is not int64. */
  int63n(n: bigint): bigint {
    checkInt64(n, "Int63n argument");
    if (n <= 0n) throw new RangeError(`invalid argument to Int63n: ${n} (want an int64 > 0)`);
    if ((n & (n - 1n)) === 0n) return this.int63() & (n - 1n);
    const max = INT64_MAX - (TWO_POW_63 % n);
    let v = this.int63();
    while (v > max) v = this.int63();
    return v % n;
  }

  /**
   * Go's `Intn(n)` on a 64-bit platform: `Int31n` for n ≤ 2**31-1, else
   * `Int63n`. `n` must be a safe integer > 0.
   */
  intn(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new RangeError(`invalid argument to Intn: ${n} (want a safe integer > 0)`);
    }
    if (n <= INT32_MAX) return this.int31n(n);
    return Number(this.int63n(BigInt(n)));
  }
}

/** Go's `rand.New(rand.NewSource(seed))`. */
export function newRand(seed: bigint): Rand {
  return new Rand(seed);
}
