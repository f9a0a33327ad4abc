// Latency histograms that cross process boundaries: each worker records into an HdrHistogram
// (report-kit's integer histogram, µs, 3 significant digits), sends it encoded (HdrHistogram's
// compressed base64) with its exact count, sum, min and max, and the coordinator merges them.
import { buildIntegerHistogram } from "@flaplab/report-kit/histogram";
import * as hdr from "hdr-histogram-js";

/** One histogram as it travels: HdrHistogram's compressed base64 and the exact figures beside it. */
export interface EncodedHist {
  readonly hdr: string;
  readonly samples: number;
  readonly sum: number;
  readonly min: number | null;
  readonly max: number | null;
}

/** Percentiles of a histogram, ms. */
export interface MsSummary {
  readonly samples: number;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly p99: number | null;
  readonly p999: number | null;
  readonly max: number | null;
  readonly mean: number | null;
}

const build = () => buildIntegerHistogram({ bitBucketSize: 64, numberOfSignificantValueDigits: 3 });

/** A histogram of durations recorded in ms and kept in whole µs. */
export class LatencyHist {
  private h: hdr.Histogram = build();
  private n = 0;
  private total = 0;
  private low = Number.POSITIVE_INFINITY;
  private high = Number.NEGATIVE_INFINITY;

  /** Records `ms` (negative and non-finite values count as 0). */
  recordMs(ms: number): void {
    const us = Number.isFinite(ms) && ms > 0 ? Math.round(ms * 1000) : 0;
    this.h.recordValue(us);
    this.n++;
    this.total += us;
    if (us < this.low) this.low = us;
    if (us > this.high) this.high = us;
  }

  get samples(): number {
    return this.n;
  }

  encode(): EncodedHist {
    return {
      hdr: this.n === 0 ? "" : hdr.encodeIntoCompressedBase64(this.h),
      samples: this.n,
      sum: this.total,
      min: this.n === 0 ? null : this.low,
      max: this.n === 0 ? null : this.high,
    };
  }

  /** Adds an encoded histogram's samples. */
  merge(e: EncodedHist): void {
    if (e.samples === 0) return;
    this.h.add(hdr.decodeFromCompressedBase64(e.hdr, 64, false));
    this.n += e.samples;
    this.total += e.sum;
    if (e.min !== null) this.low = Math.min(this.low, e.min);
    if (e.max !== null) this.high = Math.max(this.high, e.max);
  }

  reset(): void {
    this.h = build();
    this.n = 0;
    this.total = 0;
    this.low = Number.POSITIVE_INFINITY;
    this.high = Number.NEGATIVE_INFINITY;
  }

  /** The value at percentile `p` (0–100), ms, clamped to the exact [min, max]; null without samples. */
  atMs(p: number): number | null {
    if (this.n === 0) return null;
    return Math.min(Math.max(this.h.getValueAtPercentile(p), this.low), this.high) / 1000;
  }

  summary(): MsSummary {
    return {
      samples: this.n,
      p50: this.atMs(50),
      p90: this.atMs(90),
      p99: this.atMs(99),
      p999: this.atMs(99.9),
      max: this.n === 0 ? null : this.high / 1000,
      mean: this.n === 0 ? null : this.total / this.n / 1000,
    };
  }
}
