import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";

/** Garbage-collection pauses seen while watching. */
export interface GcPauses {
  readonly count: number;
  /** Young-generation collections (scavenges). */
  readonly minor: number;
  readonly totalMs: number;
  readonly p50Ms: number | null;
  readonly maxMs: number | null;
  /** Pauses longer than 2 ms. */
  readonly over2Ms: number;
}

/** Records the main-thread GC pauses (perf_hooks "gc" entries) between start() and stop(). */
export class GcWatch {
  private readonly pauses: { ms: number; minor: boolean }[] = [];
  private observer: PerformanceObserver | undefined;

  start(): void {
    this.pauses.length = 0;
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
        this.pauses.push({ ms: e.duration, minor: e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR });
      }
    });
    this.observer.observe({ entryTypes: ["gc"] });
  }

  stop(): GcPauses {
    this.observer?.disconnect();
    this.observer = undefined;
    const ms = this.pauses.map((p) => p.ms).sort((a, b) => a - b);
    return {
      count: ms.length,
      minor: this.pauses.filter((p) => p.minor).length,
      totalMs: ms.reduce((a, b) => a + b, 0),
      p50Ms: ms.length ? ms[(ms.length - 1) >> 1]! : null,
      maxMs: ms.length ? ms[ms.length - 1]! : null,
      over2Ms: ms.filter((x) => x > 2).length,
    };
  }
}
