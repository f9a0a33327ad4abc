import { ExactHistogram } from "@flaplab/report-kit/histogram";

/** Percentiles of one histogram, in the unit it was recorded in. */
export interface Percentiles {
  readonly samples: number;
  readonly p50: number | null;
  readonly p99: number | null;
  readonly p999: number | null;
  readonly max: number | null;
  readonly mean: number | null;
}

/**
 * An HdrHistogram (3 significant digits) of non-negative values in one integer unit (ns or µs),
 * with the exact count, sum and max beside it.
 */
export class Hist {
  private readonly h = new ExactHistogram();

  /** Records `value` (rounded; negative and non-finite values count as 0). */
  record(value: number): void {
    this.h.record(value);
  }

  get samples(): number {
    return this.h.samples;
  }

  /** The value at percentile `p` (0–100), or null without samples. */
  at(p: number): number | null {
    return this.h.percentile(p);
  }

  summary(): Percentiles {
    return { samples: this.h.samples, p50: this.at(50), p99: this.at(99), p999: this.at(99.9), max: this.h.max, mean: this.h.mean };
  }

  reset(): void {
    this.h.reset();
  }
}

/** `p` with every value divided by `div` (e.g. ns → µs). */
export function scale(p: Percentiles, div: number): Percentiles {
  const f = (v: number | null) => (v === null ? null : v / div);
  return { samples: p.samples, p50: f(p.p50), p99: f(p.p99), p999: f(p.p999), max: f(p.max), mean: f(p.mean) };
}
