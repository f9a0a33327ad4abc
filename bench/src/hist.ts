import * as hdr from "hdr-histogram-js";

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
  private readonly h: hdr.Histogram = hdr.build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
  private n = 0;
  private sum = 0;
  private top = 0;

  /** Records `value` (rounded; negative and non-finite values count as 0). */
  record(value: number): void {
    const v = Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
    this.h.recordValue(v);
    this.n++;
    this.sum += v;
    if (v > this.top) this.top = v;
  }

  get samples(): number {
    return this.n;
  }

  /** The value at percentile `p` (0–100), or null without samples. */
  at(p: number): number | null {
    return this.n === 0 ? null : Math.min(this.h.getValueAtPercentile(p), this.top);
  }

  summary(): Percentiles {
    return {
      samples: this.n,
      p50: this.at(50),
      p99: this.at(99),
      p999: this.at(99.9),
      max: this.n === 0 ? null : this.top,
      mean: this.n === 0 ? null : this.sum / this.n,
    };
  }

  reset(): void {
    this.h.reset();
    this.n = 0;
    this.sum = 0;
    this.top = 0;
  }
}

/** `p` with every value divided by `div` (e.g. ns → µs). */
export function scale(p: Percentiles, div: number): Percentiles {
  const f = (v: number | null) => (v === null ? null : v / div);
  return { samples: p.samples, p50: f(p.p50), p99: f(p.p99), p999: f(p.p999), max: f(p.max), mean: f(p.mean) };
}
