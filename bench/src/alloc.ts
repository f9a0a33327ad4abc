import { GCProfiler } from "node:v8";

/** Heap bytes allocated while measuring, from V8's own GC statistics. */
export interface Allocation {
  /** Bytes allocated on the JS heap between start() and stop(). */
  readonly bytes: number;
  /** Collections in between (any kind). */
  readonly gcs: number;
  /** Longest collection, ms (V8's own cost figure; the pause on the main thread). */
  readonly maxGcMs: number | null;
}

/**
 * Allocation meter: heap used at the end − at the start + what each collection in between freed
 * (`v8.GCProfiler` reports the heap before and after every collection, synchronously). So young
 * garbage counts even when scavenges collect it.
 */
export class AllocMeter {
  private profiler: GCProfiler | undefined;
  private startUsed = 0;

  start(): void {
    this.profiler = new GCProfiler();
    this.profiler.start();
    this.startUsed = used();
  }

  stop(): Allocation {
    const endUsed = used();
    const result = this.profiler?.stop();
    this.profiler = undefined;
    let freed = 0;
    let maxGcMs: number | null = null;
    for (const gc of result?.statistics ?? []) {
      freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
      const ms = gc.cost / 1000;
      if (maxGcMs === null || ms > maxGcMs) maxGcMs = ms;
    }
    return { bytes: Math.max(0, endUsed - this.startUsed + freed), gcs: result?.statistics.length ?? 0, maxGcMs };
  }
}

function used(): number {
  return process.memoryUsage().heapUsed;
}
