import { GCProfiler } from "node:v8";
import { describe, expect, it } from "vitest";
import { ManualTickClock, SingleTimerClock, type TickClock, type TickInfo, TickScheduler, type TickTarget } from "../src/index.js";
import { countingClock } from "./counting-clock.js";


describe("TickScheduler", () => {
  it("cuts a round that has run its slice, lets ready I/O have a turn (defer) and goes on where it stopped", () => {
    const clock = new ManualTickClock(0);
    const deferred: (() => void)[] = [];
    const deferring: TickClock = {
      now: () => clock.now(),
      setTimer: (fn, ms) => clock.setTimer(fn, ms),
      clearTimer: (h) => clock.clearTimer(h),
      defer: (fn) => void deferred.push(fn),
    };
    const scheduler = new TickScheduler({ clock: deferring, sliceMs: 2 });
    const runs: { id: number; lateness: number }[] = [];
    const tasks = [0, 1, 2, 3, 4].map((id) =>
      scheduler.schedule((info) => {
        runs.push({ id, lateness: info.latenessMs });
        clock.jump(1); // each task works 1 ms
      }, 0),
    );
    clock.advanceTo(33);
    // Two tasks fill the 2 ms slice; the rest waits for the continuation, and no timer is armed meanwhile.
    expect(runs.map((r) => r.id)).toEqual([0, 1]);
    expect(deferred).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
    // A task cancelled while the round waits does not run.
    tasks[3]!.cancel();
    expect(clock.pendingTimers).toBe(0);
    deferred.shift()!();
    expect(runs.map((r) => r.id)).toEqual([0, 1, 2, 4]);
    // Each ran when the one before it ended: its lateness counts the work done before it.
    expect(runs.map((r) => r.lateness)).toEqual([0, 1, 2, 3]);
    expect(deferred).toHaveLength(0);
    // The round is over: the next deadline has its timer, and the next round runs whole.
    expect(clock.pendingTimers).toBe(1);
    scheduler.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it("goes on with a 0 ms timer on a clock without defer, and a stop while a round waits ends it", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock, sliceMs: 2 });
    const ran: number[] = [];
    for (const id of [0, 1, 2, 3]) {
      scheduler.schedule(() => {
        ran.push(id);
        clock.jump(1);
        if (id === 1) scheduler.stop();
      }, 0);
    }
    clock.advanceTo(33);
    expect(ran).toEqual([0, 1]);
    clock.advance(1000);
    expect(ran).toEqual([0, 1]);
    expect(scheduler.size).toBe(0);
  });

  it("moves task starts up to the slot grid, so tasks started within one slot share their rounds and timers", () => {
    const { clock, counting, armed } = countingClock(1000);
    const scheduler = new TickScheduler({ clock: counting });
    const ran: { id: number; scheduledMs: number; nowMs: number }[] = [];
    // 100 tasks started at 1000.00, 1000.01, … 1000.99 ms (performance.now() readings of one ms).
    const tasks = Array.from({ length: 100 }, (_, id) =>
      scheduler.schedule((info) => void ran.push({ id, scheduledMs: info.scheduledMs, nowMs: info.nowMs }), 1000 + id / 100),
    );
    // Every one counts from the next whole ms (1000.00 is on the grid already).
    expect(tasks[0]!.startMs).toBe(1000);
    expect(tasks.slice(1).every((t) => t.startMs === 1001)).toBe(true);
    const armedBefore = armed();
    clock.advanceTo(1000 + 33 * 3 + 1);
    // Three periods: the first task's three runs at 1033, 1066, 1099 and the others' at 1034, 1067, 1100.
    expect(ran).toHaveLength(300);
    expect(new Set(ran.filter((r) => r.id > 0).map((r) => r.scheduledMs))).toEqual(new Set([1034, 1067, 1100]));
    expect(ran.every((r) => r.nowMs >= r.scheduledMs)).toBe(true);
    // One timer per deadline (six), not one per task and tick (300).
    expect(armed() - armedBefore).toBeLessThanOrEqual(6);
    // A grid of 0 keeps the start as given; a bad grid is refused.
    const exact = new TickScheduler({ clock, slotMs: 0 });
    expect(exact.schedule(() => false, 1200.25).startMs).toBe(1200.25);
    const halves = new TickScheduler({ clock, slotMs: 0.5 });
    expect(halves.schedule(() => false, 1200.25).startMs).toBe(1200.5);
    expect(() => new TickScheduler({ slotMs: -1 })).toThrow(RangeError);
    expect(() => new TickScheduler({ slotMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    scheduler.stop();
    exact.stop();
    halves.stop();
  });

  it("hands every run of every task the same TickInfo object, updated (nothing allocated per tick)", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const seen = new Set<TickInfo>();
    const ks: number[] = [];
    scheduler.schedule((info) => {
      seen.add(info);
      ks.push(info.k);
    });
    scheduler.schedule((info) => void seen.add(info), 10);
    clock.advance(33 * 5 + 10);
    expect(seen.size).toBe(1);
    expect(ks).toEqual([1, 2, 3, 4, 5]);
  });

  it("allocates no heap per run in the steady state, with deadlines that are not whole ms", () => {
    // 2,000 tasks started at fractional times, as on performance.now(), on a clock that allocates
    // nothing itself (SingleTimerClock: one timer slot, whole-ms readings, never boxed). A deadline
    // held as a new heap number per run (a field V8 does not keep as a double) is 16 bytes per run.
    const clock = new SingleTimerClock();
    const scheduler = new TickScheduler({ clock });
    let runs = 0;
    for (let i = 0; i < 2000; i++) scheduler.schedule(() => void runs++, (i * 33) / 2000 + 0.25);
    for (let ms = 0; ms < 33 * 60; ms++) clock.advance(1);
    const profiler = new GCProfiler();
    profiler.start();
    const usedBefore = process.memoryUsage().heapUsed;
    const runsBefore = runs;
    for (let ms = 0; ms < 33 * 60; ms++) clock.advance(1);
    const usedAfter = process.memoryUsage().heapUsed;
    let freed = 0;
    for (const gc of profiler.stop().statistics) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    const measured = runs - runsBefore;
    expect(measured).toBe(2000 * 60);
    expect((usedAfter - usedBefore + freed) / measured).toBeLessThan(4);
  });

  it("calls a target's onTick, with the target as this, until it returns false", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    class Counter implements TickTarget {
      ticks: number[] = [];
      onTick(info: TickInfo): boolean {
        this.ticks.push(info.k);
        return info.k < 3;
      }
    }
    const counter = new Counter();
    const task = scheduler.schedule(counter);
    let fnRuns = 0;
    scheduler.schedule(() => void fnRuns++);
    clock.advance(33 * 5);
    expect(counter.ticks).toEqual([1, 2, 3]);
    expect(task.active).toBe(false);
    expect(task.runs).toBe(3);
    expect(fnRuns).toBe(5);
  });

  it("runs a task at start + k·33 ms, without drift", () => {
    const clock = new ManualTickClock(1000);
    const scheduler = new TickScheduler({ clock });
    const runs: TickInfo[] = [];
    scheduler.schedule((info) => void runs.push({ ...info }));
    clock.advance(32);
    expect(runs).toHaveLength(0);
    clock.advance(1);
    expect(runs).toHaveLength(1);
    clock.advance(33 * 299);
    expect(runs).toHaveLength(300);
    runs.forEach((r, i) => {
      expect(r.k).toBe(i + 1);
      expect(r.scheduledMs).toBe(1000 + 33 * (i + 1));
      expect(r.latenessMs).toBe(0);
      expect(r.skipped).toBe(0);
    });
  });

  it("keeps its deadlines when the timer fires late", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const runs: TickInfo[] = [];
    scheduler.schedule((info) => void runs.push({ ...info }));
    for (let k = 1; k <= 20; k++) {
      clock.jump(33 * k + 7 - clock.now()); // every wake-up 7 ms late
      clock.runDue();
    }
    // Late wake-ups do not push later deadlines back.
    expect(runs.map((r) => r.scheduledMs)).toEqual(runs.map((_, i) => 33 * (i + 1)));
    expect(runs.map((r) => r.latenessMs)).toEqual(Array(20).fill(7));
  });

  it("catches up a tick that is less than one period late", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const runs: TickInfo[] = [];
    scheduler.schedule((info) => void runs.push({ ...info }));
    clock.jump(73); // deadline 33 is 40 ms late, 66 is 7 ms late
    clock.runDue();
    expect(runs.map((r) => [r.k, r.latenessMs, r.skipped])).toEqual([
      [1, 40, 0],
      [2, 7, 0],
    ]);
  });

  it("skips the ticks it fell more than a period behind on, and counts them", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const runs: TickInfo[] = [];
    const task = scheduler.schedule((info) => void runs.push({ ...info }));
    clock.jump(200); // deadlines 33…198 all passed
    clock.runDue();
    // 33 runs (late), then the latest due deadline (198) runs; 66…165 are skipped.
    expect(runs.map((r) => [r.k, r.scheduledMs, r.skipped])).toEqual([
      [1, 33, 0],
      [6, 198, 4],
    ]);
    expect(task.skipped).toBe(4);
    clock.advanceTo(231);
    expect(runs.at(-1)).toMatchObject({ k: 7, latenessMs: 0, skipped: 0 });
    expect(task.runs).toBe(3);
  });

  it("uses one timer for many tasks and runs them in deadline order", () => {
    const { clock, counting, armed } = countingClock(0);
    const scheduler = new TickScheduler({ clock: counting });
    const order: string[] = [];
    for (let i = 0; i < 1000; i++) {
      clock.jump(0.01);
      scheduler.schedule(({ k }) => {
        if (i % 250 === 0) order.push(`${i}@${k}`);
      });
    }
    expect(clock.pendingTimers).toBe(1);
    expect(armed()).toBe(1); // later tasks never have an earlier deadline
    clock.advance(33 * 2);
    expect(order).toEqual(["0@1", "250@1", "500@1", "750@1", "0@2", "250@2", "500@2", "750@2"]);
    expect(clock.pendingTimers).toBe(1);
    expect(scheduler.size).toBe(1000);
  });

});
