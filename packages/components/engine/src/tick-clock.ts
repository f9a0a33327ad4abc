/** The time source and the one timer a TickScheduler uses. */
export interface TickClock {
  /** Monotonic ms (performance.now()). */
  now(): number;
  /** Calls `fn` once, `delayMs` (fractional, ≥ 0) from now or as soon after as the clock can. */
  setTimer(fn: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
  /**
   * Calls `fn` once, as soon as the I/O that is ready has had its turn (setImmediate): how a
   * round that has run its slice goes on. Without it, a timer of 0 ms.
   */
  defer?(fn: () => void): void;
}

/**
 * performance.now() and setTimeout: whole milliseconds, rounded up (a timer never fires before
 * its deadline), so a tick runs 0–1 ms after it is due before any work (`createPreciseTickClock`
 * is finer).
 */
export const realTickClock: TickClock = {
  now: () => performance.now(),
  setTimer: (fn, delayMs) => setTimeout(fn, Math.ceil(delayMs)),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  defer: (fn) => void setImmediate(fn),
};
