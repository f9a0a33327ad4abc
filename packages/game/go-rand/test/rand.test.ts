import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RNG_COOKED, Rand, newRand } from "../src/index.js";

interface Vector {
  seed: string;
  int63_first_10: string[];
  int31n_n: number;
  int31n_first_10: number[];
}

// Made by Go's own math/rand (scripts/fidelity-vectors.sh; test-data/flappygo/README.md).
const VECTORS = path.resolve(import.meta.dirname, "../../../../test-data/flappygo/go-math-rand-vectors.json");
const COOKED = path.resolve(import.meta.dirname, "../../../../test-data/flappygo/go-math-rand-cooked.json");

describe("Go math/rand vectors (test-data/flappygo)", () => {
  const vectors = JSON.parse(readFileSync(VECTORS, "utf8")) as Vector[];

  it("has vectors to check", () => {
    expect(vectors.length).toBeGreaterThan(0);
  });

  for (const v of vectors) {
    it(`seed ${v.seed}: first 10 Int63`, () => {
      const r = newRand(BigInt(v.seed));
      const got = Array.from({ length: v.int63_first_10.length }, () => r.int63().toString());
      expect(got).toEqual(v.int63_first_10);
    });

    it(`seed ${v.seed}: first 10 Int31n(${v.int31n_n})`, () => {
      const r = newRand(BigInt(v.seed));
      const got = Array.from({ length: v.int31n_first_10.length }, () => r.int31n(v.int31n_n));
      expect(got).toEqual(v.int31n_first_10);
    });
  }
});

describe("rngCooked", () => {
  it("matches Go's table", () => {
    const shared = JSON.parse(readFileSync(COOKED, "utf8")) as string[];
    expect(RNG_COOKED.map(String)).toEqual(shared);
  });
});

describe("FlappyGo's published values", () => {
  const table = [
    {
      seed: 6977347407732442987n,
      int63: [2276775869942979547n, 3433985590394814390n, 6482058744245550836n],
      int31n120: 71,
    },
    {
      seed: 8525333463046388971n,
      int63: [2391234159861407940n, 5802128848504663733n, 4377325626346574172n],
      int31n120: 108,
    },
  ];
  for (const row of table) {
    it(`seed ${row.seed}`, () => {
      const r = new Rand(row.seed);
      expect([r.int63(), r.int63(), r.int63()]).toEqual(row.int63);
      expect(new Rand(row.seed).int31n(120)).toBe(row.int31n120);
    });
  }
});

describe("Rand", () => {
  it("has 607 cooked words", () => {
    expect(RNG_COOKED).toHaveLength(607);
  });

  it("Int63 is Uint64 with the top bit cleared, Int31 is Int63 >> 32", () => {
    const a = new Rand(99n);
    const b = new Rand(99n);
    const c = new Rand(99n);
    for (let i = 0; i < 2000; i++) {
      const u = a.uint64();
      expect(u >= 0n && u < 1n << 64n).toBe(true);
      expect(b.int63()).toBe(u & ((1n << 63n) - 1n));
      expect(BigInt(c.int31())).toBe((u & ((1n << 63n) - 1n)) >> 32n);
    }
  });

  it("Seed restarts the sequence", () => {
    const r = new Rand(7n);
    const first = [r.int63(), r.int63()];
    r.int31n(1000);
    r.seed(7n);
    expect([r.int63(), r.int63()]).toEqual(first);
  });

  it("seeds congruent mod 2^31-1 give the same stream; 0 and 2^31-1 both map to 89482311", () => {
    const m = 2147483647n;
    expect(new Rand(5n + 3n * m).int63()).toBe(new Rand(5n).int63());
    expect(new Rand(-5n).int63()).toBe(new Rand(m - 5n).int63());
    expect(new Rand(0n).int63()).toBe(new Rand(89482311n).int63());
    expect(new Rand(m).int63()).toBe(new Rand(89482311n).int63());
    expect(new Rand(1n).int63()).not.toBe(new Rand(2n).int63());
  });

  it("Int31n with a power of two masks Int31", () => {
    const a = new Rand(3n);
    const b = new Rand(3n);
    for (let i = 0; i < 100; i++) expect(a.int31n(64)).toBe(b.int31() & 63);
  });

  it("Int31n stays in range", () => {
    const r = new Rand(11n);
    for (const n of [1, 2, 3, 7, 120, 1_000_000_007, 2147483647]) {
      for (let i = 0; i < 200; i++) {
        const v = r.int31n(n);
        expect(Number.isInteger(v) && v >= 0 && v < n).toBe(true);
      }
    }
  });

  it("Int31n rejects n <= 0 and non-int32 n like Go's panic", () => {
    const r = new Rand(1n);
    expect(() => r.int31n(0)).toThrow(RangeError);
    expect(() => r.int31n(-5)).toThrow(/invalid argument to Int31n/);
    expect(() => r.int31n(2.5)).toThrow(RangeError);
    expect(() => r.int31n(2 ** 31)).toThrow(RangeError);
  });

  it("Int63n and Intn follow Go's dispatch", () => {
    const a = new Rand(5n);
    const b = new Rand(5n);
    for (let i = 0; i < 50; i++) expect(a.intn(480)).toBe(b.int31n(480));
    const big = 3n * (1n << 40n) + 17n;
    const c = new Rand(5n);
    const d = new Rand(5n);
    for (let i = 0; i < 50; i++) {
      const v = c.int63n(big);
      expect(v >= 0n && v < big).toBe(true);
      expect(BigInt(d.intn(Number(big)))).toBe(v);
    }
    expect(() => a.int63n(0n)).toThrow(RangeError);
    expect(() => a.intn(0)).toThrow(RangeError);
  });

  it("rejects seeds outside int64", () => {
    expect(() => new Rand(1n << 63n)).toThrow(RangeError);
    expect(() => new Rand(-(1n << 63n) - 1n)).toThrow(RangeError);
    expect(() => new Rand(-(1n << 63n))).not.toThrow();
  });
});
