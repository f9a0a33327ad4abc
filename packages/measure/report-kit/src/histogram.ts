import * as hdr from "hdr-histogram-js";

/**
 * The counts index of integer `value` (0 ≤ value < 2³¹) in `h`, found with Math.clz32 and shifts
 * (the index is far below 2³¹: the counts array is indexed by it):
 * what hdr-histogram-js's `countsArrayIndex` computes with Math.log2, Math.pow and a division,
 * which made each record cost several times more. Undefined for other values (the library's own
 * path takes them).
 */
function integerCountsIndex(h: hdr.JsHistogram, value: number): number | undefined {
  if (!(value >= 0 && value < 2147483648) || value !== Math.floor(value)) return undefined;
  const magnitude = h.subBucketHalfCountMagnitude;
  const unit = h.unitMagnitude;
  const bucket = Math.max(31 - Math.clz32(value) - magnitude - unit, 0);
  const subBucket = value >>> (bucket + unit);
  return ((bucket + 1) << magnitude) + subBucket - h.subBucketHalfCount;
}

/** hdr-histogram-js's 32-bit-count histogram, recording integers through `integerCountsIndex`. */
class Int32IntegerHistogram extends hdr.Int32Histogram {
  override countsArrayIndex(value: number): number {
    return integerCountsIndex(this, value) ?? super.countsArrayIndex(value);
  }
}

/** hdr-histogram-js's 64-bit-float-count histogram, recording integers through `integerCountsIndex`. */
class Float64IntegerHistogram extends hdr.Float64Histogram {
  override countsArrayIndex(value: number): number {
    return integerCountsIndex(this, value) ?? super.countsArrayIndex(value);
  }
}

/** What `buildIntegerHistogram` takes: hdr-histogram-js's `BuildRequest` for pure-JS 32 or 64 bit counts. */
export interface IntegerHistogramRequest {
  readonly bitBucketSize: 32 | 64;
  readonly numberOfSignificantValueDigits: 1 | 2 | 3 | 4 | 5;
  readonly lowestDiscernibleValue?: number;
  readonly highestTrackableValue?: number;
  readonly autoResize?: boolean;
}

/**
 * `hdr.build` for a pure-JS histogram of integers (auto-resizing unless told), whose records skip
 * the library's floating-point bucket search: the same counts, percentiles and encoding as
 * `hdr.build`'s, at a fraction of the CPU per record.
 */
export function buildIntegerHistogram(request: IntegerHistogramRequest): hdr.Histogram {
  const Histogram = request.bitBucketSize === 32 ? Int32IntegerHistogram : Float64IntegerHistogram;
  const h = new Histogram(request.lowestDiscernibleValue ?? 1, request.highestTrackableValue ?? 2, request.numberOfSignificantValueDigits);
  h.autoResize = request.autoResize ?? true;
  return h;
}

/**
 * An HdrHistogram (3 significant digits, auto-resizing, pure JS) of non-negative integers in one
 * unit (ns, µs), with the exact count, sum, min and max beside it. Percentiles come from the
 * histogram, clamped to the exact [min, max]; histograms merge by adding counts.
 */
export class ExactHistogram {
  private readonly h: hdr.Histogram = buildIntegerHistogram({ bitBucketSize: 64, numberOfSignificantValueDigits: 3 });
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
