import { describe, expect, it } from "vitest";
import { type LoadClock, runOpenLoop } from "../src/openloop.js";

/** Virtual time: sleeping timers fire only when the test advances the clock to them. */
class VirtualClock implements LoadClock {
  t = 0;
  private timers: { at: number; fire: () => void }[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((fire) => this.at(this.t + Math.max(0, ms), fire));
  }
  at(time: number, fire: () => void): void {
    this.timers.push({ at: time, fire });
    this.timers.sort((a, b) => a.at - b.at);
  }
  /** Moves to the earliest timer and fires every timer due then; false when none is left. */
  advance(): boolean {
    const first = this.timers[0];
    if (!first) return false;
    this.t = Math.max(this.t, first.at);
    while (this.timers[0] && this.timers[0].at <= this.t) this.timers.shift()!.fire();
    return true;
  }
}

/** One request at a time, `serviceMs` each, and no progress at all from `stallAt` for `stallMs`. */
function serialServer(clock: VirtualClock, serviceMs: number, stallAt: number, stallMs: number) {
  let freeAt = 0;
  return () =>
    new Promise<void>((done) => {
      let start = Math.max(clock.now(), freeAt);
      if (start >= stallAt && start < stallAt + stallMs) start = stallAt + stallMs; // waits out the stall
      let end = start + serviceMs;
      if (start < stallAt && end > stallAt) end += stallMs; // caught by the stall
      freeAt = end;
      clock.at(end, done);
    });
}

async function drive(clock: VirtualClock, run: Promise<unknown>): Promise<void> {
  let finished = false;
  void run.finally(() => (finished = true));
  for (let i = 0; i < 100_000 && !finished; i++) {
    await new Promise((r) => setImmediate(r));
    if (!finished && !clock.advance()) await new Promise((r) => setImmediate(r));
  }
}

describe("open-loop load", () => {
  it("measures from the intended send time: a stall delays every request due during it, not just the one it caught", async () => {
    const clock = new VirtualClock();
    // 1 request per ms for 200 ms; the server takes 0.1 ms, and stalls 50 ms at t = 20 ms.
    const call = serialServer(clock, 0.1, 20, 50);
    const samples: { i: number; intended: number; sent: number; done: number }[] = [];
    // One request in flight at a time: a closed-loop client's situation, the classic coordinated omission.
    const run = runOpenLoop({
      rate: 1000,
      durationMs: 200,
      maxInFlight: 1,
      call,
      clock,
      onSample: (i, intended, sent, done) => samples.push({ i, intended, sent, done }),
    });
    await drive(clock, run);
    const result = await run;
    expect(result).toMatchObject({ scheduled: 200, completed: 200, errors: 0, abandoned: 0 });

    const corrected = samples.map((s) => s.done - s.intended);
    const uncorrected = samples.map((s) => s.done - s.sent);
    // Only the request the stall caught looks slow when timed from its actual send…
    expect(uncorrected.filter((ms) => ms > 10)).toHaveLength(1);
    // …but every request due during the stall waited for it.
    const dueDuringStall = samples.filter((s) => s.intended >= 20 && s.intended < 70);
    expect(dueDuringStall.length).toBeGreaterThanOrEqual(49);
    for (const s of dueDuringStall) expect(s.done - s.intended).toBeGreaterThanOrEqual(70 - s.intended - 1e-9);
    expect(corrected.filter((ms) => ms > 10).length).toBeGreaterThanOrEqual(40);
    // Once the backlog has drained, latencies are back to the service time.
    const late = samples.filter((s) => s.intended >= 150);
    expect(Math.max(...late.map((s) => s.done - s.intended))).toBeLessThan(1);

    // The histograms agree: p99 corrected ≈ the stall; uncorrected p99 ≈ the service time.
    expect(result.latency.p99!).toBeGreaterThan(30_000);
    expect(result.uncorrected.p99!).toBeLessThan(1000);
  });

  it("sends on schedule when the server keeps up", async () => {
    const clock = new VirtualClock();
    const call = serialServer(clock, 0.2, Infinity, 0);
    const run = runOpenLoop({ rate: 500, durationMs: 100, call, clock });
    await drive(clock, run);
    const result = await run;
    expect(result.completed).toBe(50);
    expect(result.latency.max!).toBeLessThanOrEqual(201);
    expect(result.meanSendLagUs).toBe(0);
  });
});
