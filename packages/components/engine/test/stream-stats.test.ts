import { describe, expect, it } from "vitest";
import { LATENESS_RANGE_US, LATENESS_SAMPLE_EVERY, StreamStats } from "../src/stream-stats.js";

describe("StreamStats", () => {
  it("starts at zero", () => {
    expect(new StreamStats().summary()).toEqual({
      framesSent: 0,
      frameBytes: 0n,
      framesUnder1kb: 0,
      tickLatenessP50Us: 0,
      tickLatenessMaxUs: 0,
      ticksSkipped: 0,
      acksSent: 0,
      ackBytes: 0n,
    });
  });

  it("counts frames with their bytes and those under 1 KiB, and acks apart", () => {
    const stats = new StreamStats();
    stats.frame(20);
    stats.frame(1023);
    stats.frame(1024);
    stats.ack(25);
    stats.ack(26);
    expect(stats.summary()).toMatchObject({ framesSent: 3, frameBytes: 2067n, framesUnder1kb: 2, acksSent: 2, ackBytes: 51n });
  });

  it("samples lateness at the first tick and every 8th frame after it, keeps the max over every tick, and sums skipped ticks", () => {
    const stats = new StreamStats();
    // Frame 0 (sampled) 2 ms late, frames 1–7 unsampled 9 ms late, frame 8 (sampled) 4 ms late.
    for (let i = 0; i <= LATENESS_SAMPLE_EVERY; i++) {
      const lateMs = i === 0 ? 2 : i === LATENESS_SAMPLE_EVERY ? 4 : 9;
      stats.tick(lateMs, i === 3 ? 2 : 0);
      stats.frame(16);
    }
    const summary = stats.summary();
    expect(summary.tickLatenessMaxUs).toBe(9000);
    // Only 2 and 4 ms are in the histogram: its p50 is the lower one (2 significant digits).
    expect(summary.tickLatenessP50Us).toBeGreaterThanOrEqual(1990);
    expect(summary.tickLatenessP50Us).toBeLessThanOrEqual(2010);
    expect(summary.ticksSkipped).toBe(2);
  });

  it("counts an early or on-time tick as 0 µs, and one beyond the range as the range in the p50", () => {
    const stats = new StreamStats();
    stats.tick(-0.5, 0);
    expect(stats.summary()).toMatchObject({ tickLatenessP50Us: 0, tickLatenessMaxUs: 0 });
    const late = new StreamStats();
    late.tick(5000, 0);
    const summary = late.summary();
    expect(summary.tickLatenessMaxUs).toBe(5_000_000);
    expect(summary.tickLatenessP50Us).toBeGreaterThan(LATENESS_RANGE_US * 0.99);
    expect(summary.tickLatenessP50Us).toBeLessThanOrEqual(LATENESS_RANGE_US * 1.01);
  });
});
