// An open-loop load generator (wrk2-style): requests are due at a fixed rate whether or not earlier
// ones have finished, and each latency is measured from the request's INTENDED send time, so a
// stall delays the latencies of every request due during it (coordinated omission corrected).
import { Hist, type Percentiles } from "./hist.js";

export interface LoadClock {
  /** Monotonic ms. */
  now(): number;
  /** Resolves after about `ms` ms. */
  sleep(ms: number): Promise<void>;
}

export const realLoadClock: LoadClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms))),
};

export interface OpenLoopOptions {
  /** Requests per second. */
  readonly rate: number;
  /** How long requests are issued, ms. */
  readonly durationMs: number;
  /** One request; a rejection counts as an error (its latency is still recorded). */
  readonly call: () => Promise<unknown>;
  /** Most requests in flight; due requests beyond it wait (their latency keeps counting). Default 512. */
  readonly maxInFlight?: number;
  /** Requests still in flight this long after the last one was due are abandoned. Default 5000 ms. */
  readonly drainMs?: number;
  readonly clock?: LoadClock;
  /** Called for each finished request with its intended send, actual send and completion times (ms). */
  readonly onSample?: (index: number, intendedMs: number, sentMs: number, doneMs: number, ok: boolean) => void;
}

export interface OpenLoopResult {
  readonly rate: number;
  /** Requests due in the run. */
  readonly scheduled: number;
  readonly completed: number;
  readonly errors: number;
  /** Requests still in flight when the drain time ran out. */
  readonly abandoned: number;
  /** From the intended send time, µs (coordinated omission corrected). */
  readonly latency: Percentiles;
  /** From the actual send time, µs (what a closed-loop tool would report). */
  readonly uncorrected: Percentiles;
  /** Completed requests per second of the run (first due time to last completion). */
  readonly achievedRate: number;
  /** Mean of actual send time − intended send time, µs. */
  readonly meanSendLagUs: number;
}

/** Issues `rate × durationMs` requests at their due times and measures them. */
export async function runOpenLoop(opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const clock = opts.clock ?? realLoadClock;
  const maxInFlight = opts.maxInFlight ?? 512;
  const drainMs = opts.drainMs ?? 5000;
  const interval = 1000 / opts.rate;
  const total = Math.max(1, Math.floor((opts.rate * opts.durationMs) / 1000));
  const corrected = new Hist();
  const uncorrected = new Hist();
  let inFlight = 0;
  let completed = 0;
  let errors = 0;
  let lagSum = 0;
  let lastDone = 0;
  let wake: (() => void) | undefined;
  const settle = (index: number, intended: number, sent: number, ok: boolean) => {
    const now = clock.now();
    opts.onSample?.(index, intended, sent, now, ok);
    corrected.record((now - intended) * 1000);
    uncorrected.record((now - sent) * 1000);
    inFlight--;
    completed++;
    if (!ok) errors++;
    lastDone = now;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const t0 = clock.now();
  for (let i = 0; i < total; ) {
    const due = t0 + i * interval;
    const now = clock.now();
    if (due > now) {
      await clock.sleep(due - now);
      continue;
    }
    if (inFlight >= maxInFlight) {
      await new Promise<void>((r) => (wake = r));
      continue;
    }
    inFlight++;
    lagSum += now - due;
    let p: Promise<unknown>;
    try {
      p = opts.call();
    } catch (err) {
      p = Promise.reject(err);
    }
    const index = i;
    p.then(
      () => settle(index, due, now, true),
      () => settle(index, due, now, false),
    );
    i++;
    // Let completions run between bursts of due requests.
    if ((i & 31) === 0) await Promise.resolve();
  }
  const lastDue = t0 + (total - 1) * interval;
  while (inFlight > 0 && clock.now() - lastDue < drainMs) {
    await Promise.race([new Promise<void>((r) => (wake = r)), clock.sleep(Math.min(50, drainMs))]);
  }
  const span = Math.max(lastDone, lastDue) - t0;
  return {
    rate: opts.rate,
    scheduled: total,
    completed,
    errors,
    abandoned: inFlight,
    latency: corrected.summary(),
    uncorrected: uncorrected.summary(),
    achievedRate: span > 0 ? (completed * 1000) / span : 0,
    meanSendLagUs: total > 0 ? (lagSum / total) * 1000 : 0,
  };
}
