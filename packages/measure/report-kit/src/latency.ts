import { ExactHistogram } from "./histogram.js";

/** The summary row every latency table shows, in ms. */
export interface Stats {
  readonly samples: number;
  readonly min: number | null;
  readonly p10: number | null;
  readonly median: number | null;
  readonly mean: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly p99_9: number | null;
  readonly max: number | null;
}

/** Column keys of {@link Stats}, in table order. */
export const STAT_KEYS = ["samples", "min", "p10", "median", "mean", "p90", "p99", "p99_9", "max"] as const;
/** Column headers of every latency table, in table order. */
export const STAT_HEADERS = ["samples", "min", "p10", "median", "mean", "p90", "p99", "p99.9", "max"] as const;

const PERCENTILES = { p10: 10, median: 50, p90: 90, p99: 99, p99_9: 99.9 } as const;

/** ms → whole µs, the unit recorded in every histogram. Negative values count as 0. */
export function toMicros(ms: number): number {
  return Math.max(0, Math.round(ms * 1000));
}

/**
 * A latency histogram: HdrHistogram (µs, 3 significant digits) for the percentiles, plus the exact
 * count, sum, min and max of the recorded µs values. Histograms merge by adding counts, so a
 * merged histogram is the histogram of the pooled samples.
 */
export class LatencyHistogram {
  private readonly us = new ExactHistogram();

  static of(valuesMs: readonly number[]): LatencyHistogram {
    const h = new LatencyHistogram();
    for (const v of valuesMs) h.record(v);
    return h;
  }

  /** Records one sample given in ms (stored as round(ms × 1000) µs); non-finite values are skipped. */
  record(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.us.record(toMicros(ms));
  }

  /** Adds all samples of `other` to this histogram. */
  add(other: LatencyHistogram): void {
    this.us.add(other.us);
  }

  get samples(): number {
    return this.us.samples;
  }

  /**
   * The value at `percentile` (0–100) in ms: HdrHistogram's value (the highest value equivalent to
   * the smallest recorded value whose cumulative count reaches ⌈p/100 · n⌉), clamped to [min, max].
   */
  percentile(percentile: number): number | null {
    const us = this.us.percentile(percentile);
    return us === null ? null : us / 1000;
  }

  stats(): Stats {
    const { samples, min, max, sum } = this.us;
    if (samples === 0 || min === null || max === null) {
      return { samples: 0, min: null, p10: null, median: null, mean: null, p90: null, p99: null, p99_9: null, max: null };
    }
    return {
      samples,
      min: min / 1000,
      p10: this.percentile(PERCENTILES.p10),
      median: this.percentile(PERCENTILES.median),
      mean: Math.round(sum / samples) / 1000,
      p90: this.percentile(PERCENTILES.p90),
      p99: this.percentile(PERCENTILES.p99),
      p99_9: this.percentile(PERCENTILES.p99_9),
      max: max / 1000,
    };
  }

  /** (ms, cumulative share) points of the distribution for a CDF plot, from the histogram. */
  cdfPoints(steps = 200): { ms: number; share: number }[] {
    const min = this.us.min;
    if (min === null) return [];
    const out: { ms: number; share: number }[] = [{ ms: min / 1000, share: 0 }];
    const tail = [99.5, 99.9, 99.99];
    const ps = [...Array.from({ length: steps }, (_, i) => ((i + 1) * 100) / steps), ...tail].sort((a, b) => a - b);
    for (const p of ps) out.push({ ms: this.percentile(p)!, share: p / 100 });
    return out;
  }
}
