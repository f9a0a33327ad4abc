import { Worker } from "node:worker_threads";
import type { TickClock } from "./scheduler.js";

/**
 * The waker thread. It sleeps in `Atomics.wait` (a futex: microsecond timeouts) until the armed
 * deadline, then posts the arming's generation to the event loop and waits to be armed again.
 * `state[0]` is the generation, bumped by every arm and disarm; `deadline[0]` the deadline of that
 * arming as `performance.timeOrigin + performance.now()` (NaN: disarmed), which every thread of a
 * process reads alike to a few microseconds.
 */
const WAKER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const state = new Int32Array(workerData, 0, 1);
const deadline = new Float64Array(workerData, 8, 1);
const origin = performance.timeOrigin;
for (;;) {
  const generation = Atomics.load(state, 0);
  const due = deadline[0];
  if (Number.isNaN(due)) {
    Atomics.wait(state, 0, generation);
    continue;
  }
  const left = due - (origin + performance.now());
  if (left > 0) {
    Atomics.wait(state, 0, generation, left);
    continue;
  }
  parentPort.postMessage(generation);
  Atomics.wait(state, 0, generation);
}
`;

export const DEFAULT_MIN_INTERVAL_MS = 0.25;

/** A TickClock with sub-millisecond timers; `close()` ends its thread. */
export interface PreciseTickClock extends TickClock {
  /** Ends the waker thread; a timer still armed never fires. Idempotent. */
  close(): Promise<void>;
}

export interface PreciseTickClockOptions {
  /**
   * The shortest time between the starts of two timer callbacks, ms (default 0.25): a timer armed
   * sooner waits for it. Each wake-up costs a thread switch both ways, so this bounds them (here at
   * 4,000 a second) while tasks due close together share one callback.
   */
  readonly minIntervalMs?: number;
}

/**
 * A TickClock whose timer fires within about 0.1–0.2 ms of its deadline, where `setTimeout`'s
 * millisecond granularity (libuv's loop time and epoll's timeout are whole milliseconds) makes a
 * tick 0–1 ms late before any work is done.
 *
 * One helper thread sleeps until the deadline and wakes the event loop with a message; the timer
 * callback runs on the event loop as a `setTimeout` callback would. A delay of 0 or less runs on
 * `setImmediate` (after pending I/O), without the thread; a timer armed before the thread is up
 * (tens of ms after creation), or after it stopped, runs on `setTimeout`. It holds one timer at a
 * time, which is what a TickScheduler uses: arming a timer replaces the one armed before. Like
 * `setTimeout`, an armed timer keeps the process alive, and nothing else of the clock does.
 */
export function createPreciseTickClock(options: PreciseTickClockOptions = {}): PreciseTickClock {
  const minIntervalMs = options.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS;
  if (!(minIntervalMs >= 0) || !Number.isFinite(minIntervalMs)) throw new RangeError(`minIntervalMs must be a finite number ≥ 0, got ${minIntervalMs}`);
  const shared = new SharedArrayBuffer(16);
  const state = new Int32Array(shared, 0, 1);
  const deadline = new Float64Array(shared, 8, 1);
  deadline[0] = Number.NaN;
  const waker = new Worker(WAKER_SOURCE, { eval: true, workerData: shared, name: "flaplab-tick-waker" });
  let wakerUp = false;
  waker.once("online", () => {
    wakerUp = !closed;
  });

  /** The callback armed on the waker, and that arming's generation. */
  let armed: (() => void) | undefined;
  let generation = 0;
  /** A timer armed without the waker: setImmediate (delay ≤ 0) or setTimeout (the waker not up yet). */
  let immediate: ReturnType<typeof setImmediate> | undefined;
  let timeout: ReturnType<typeof setTimeout> | undefined;
  /** The handle of the timer armed now (its Immediate, its Timeout, or its waker generation). */
  let current: unknown;
  let closed = false;
  /** When the last timer callback started. */
  let lastFiredMs = Number.NEGATIVE_INFINITY;

  /** Arms the waker for `at` (this thread's performance.now()), or disarms it with NaN. */
  const signal = (at: number): void => {
    deadline[0] = performance.timeOrigin + at;
    generation = Atomics.add(state, 0, 1) + 1;
    Atomics.notify(state, 0);
  };
  const run = (fn: () => void): void => {
    immediate = undefined;
    timeout = undefined;
    armed = undefined;
    current = undefined;
    lastFiredMs = performance.now();
    fn();
  };
  /**
   * Runs `fn` at `due` (performance.now() time) on setTimeout. Its whole ms of loop time are
   * truncated, so it can fire up to a ms early: an early firing waits out the rest. `timeout` is
   * the latest of its Timeouts (what `clear` clears).
   */
  const timeoutAt = (fn: () => void, due: number): ReturnType<typeof setTimeout> => {
    const fire = (): void => {
      const left = due - performance.now();
      if (left > 0) timeout = setTimeout(fire, Math.ceil(left));
      else run(fn);
    };
    timeout = setTimeout(fire, Math.ceil(Math.max(0, due - performance.now())));
    return timeout;
  };
  waker.on("message", (from: number) => {
    // A message of an arming since replaced or cleared is stale.
    if (from !== generation || !armed) return;
    waker.unref();
    run(armed);
  });
  // A waker that stops (it cannot throw, but a thread can be lost) leaves the clock on setTimeout:
  // the timer armed on it moves there, and ticks go on at millisecond precision.
  const lost = (): void => {
    wakerUp = false;
    const fn = armed;
    if (!fn || closed) return;
    armed = undefined;
    // `current` stays the handle the caller holds, so clearing it still clears this timer.
    timeoutAt(fn, deadline[0]! - performance.timeOrigin);
  };
  waker.on("error", lost);
  waker.on("exit", lost);
  // After the listeners: adding a "message" listener refs the worker again.
  waker.unref();

  const clear = (): void => {
    current = undefined;
    if (immediate !== undefined) clearImmediate(immediate);
    if (timeout !== undefined) clearTimeout(timeout);
    immediate = undefined;
    timeout = undefined;
    if (armed && !closed) {
      signal(Number.NaN);
      waker.unref();
    }
    armed = undefined;
  };

  return {
    now: () => performance.now(),
    setTimer(fn, delayMs) {
      clear();
      if (closed) throw new Error("the precise tick clock is closed");
      const now = performance.now();
      const delay = Math.max(delayMs, lastFiredMs + minIntervalMs - now);
      if (!(delay > 0)) {
        immediate = setImmediate(run, fn);
        current = immediate;
      } else if (!wakerUp) {
        current = timeoutAt(fn, now + delay);
      } else {
        armed = fn;
        waker.ref();
        signal(now + delay);
        current = generation;
      }
      return current;
    },
    clearTimer(handle) {
      if (handle !== undefined && handle === current) clear();
    },
    defer(fn) {
      setImmediate(fn);
    },
    async close() {
      if (closed) return;
      clear();
      closed = true;
      await waker.terminate();
    },
  };
}
