import * as hdr from "hdr-histogram-js";

/**
 * An HdrHistogram (3 significant digits, auto-resizing, pure JS) of non-negative integers in one
 * unit (ns, µs), with the exact count, sum, min and max beside it. Percentiles come from the
 * histogram, clamped to the exact [min, max]; histograms merge by adding counts.
 */
export class ExactHistogram {
  private readonly h: hdr.Histogram = hdr.build({
    bitBucketSize: 64,
    autoResize: true,
    lowestDiscernibleValue: 1,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
  private n = 0;
  private total = 0;
  private low = Number.POSITIVE_INFINITY;
  private high = Number.NEGATIVE_INFINITY;

  /** Records `value`, rounded; negative and non-finite values count as 0. */
  record(value: number): void {
    const v = Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
    this.h.recordValue(v);
    this.n++;
    this.total += v;
    if (v < this.low) this.low = v;
    if (v > this.high) this.high = v;
  }

  /** Adds all samples of `other`. */
  add(other: ExactHistogram): void {
    if (other.n === 0) return;
    this.h.add(other.h);
    this.n += other.n;
    this.total += other.total;
    this.low = Math.min(this.low, other.low);
    this.high = Math.max(this.high, other.high);
  }

  reset(): void {
    this.h.reset();
    this.n = 0;
    this.total = 0;
    this.low = Number.POSITIVE_INFINITY;
    this.high = Number.NEGATIVE_INFINITY;
  }

  get samples(): number {
    return this.n;
  }

  get sum(): number {
    return this.total;
  }

  get min(): number | null {
    return this.n === 0 ? null : this.low;
  }

  get max(): number | null {
    return this.n === 0 ? null : this.high;
  }

  get mean(): number | null {
    return this.n === 0 ? null : this.total / this.n;
  }

  /**
   * The value at `percentile` (0–100): HdrHistogram's (the highest value equivalent to the smallest
   * recorded value whose cumulative count reaches ⌈p/100 · n⌉), clamped to [min, max]; null without samples.
   */
  percentile(percentile: number): number | null {
    if (this.n === 0) return null;
    return Math.min(Math.max(this.h.getValueAtPercentile(percentile), this.low), this.high);
  }
}
