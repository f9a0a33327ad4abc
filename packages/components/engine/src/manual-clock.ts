import type { TickClock } from "./scheduler.js";

interface Timer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/**
 * A TickClock that moves only when told to, for deterministic tests of anything built on a
 * TickScheduler. Timers fire in due order; `advance` fires each at exactly its due time.
 */
export class ManualTickClock implements TickClock {
  private time: number;
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;

  constructor(startMs = 0) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, delayMs: number): unknown {
    const timer = { id: this.nextId++, at: this.time + Math.max(0, delayMs), fn };
    this.timers.set(timer.id, timer);
    return timer.id;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers armed and not yet fired. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing each timer that falls due at its due time. */
  advance(ms: number): void {
    this.advanceTo(this.time + ms);
  }

  /** Moves time to `targetMs`, firing each timer that falls due at its due time. */
  advanceTo(targetMs: number): void {
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > targetMs) break;
      this.timers.delete(next.id);
      this.time = Math.max(this.time, next.at);
      next.fn();
    }
    this.time = Math.max(this.time, targetMs);
  }

  /** Moves time forward by `ms` without firing anything (a process that stalled). */
  jump(ms: number): void {
    this.time += ms;
  }

  /** Fires the timers already due, at the current time. */
  runDue(): void {
    this.advanceTo(this.time);
  }

  private earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers.values()) if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    return best;
  }
}

/**
 * A TickClock that moves only when told to, holding one timer (all a TickScheduler arms at a
 * time; arming again replaces it) and reading whole ms. Unlike ManualTickClock (a Map of timers,
 * fractional time) it allocates nothing and its readings are small integers, never boxed: what a
 * scheduler's rounds allocate on it is their own. `advance` takes whole ms.
 */
export class SingleTimerClock implements TickClock {
  private time = 0;
  private at = Number.POSITIVE_INFINITY;
  private fn: (() => void) | undefined = undefined;

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, delayMs: number): unknown {
    this.at = this.time + Math.ceil(delayMs);
    this.fn = fn;
    return this;
  }

  clearTimer(): void {
    this.fn = undefined;
  }

  /** Moves time forward by `ms` (whole), firing the timer each time it falls due, at its due time. */
  advance(ms: number): void {
    const target = this.time + ms;
    while (this.fn !== undefined && this.at <= target) {
      const fn = this.fn;
      this.fn = undefined;
      this.time = Math.max(this.time, this.at);
      fn();
    }
    this.time = target;
  }
}
