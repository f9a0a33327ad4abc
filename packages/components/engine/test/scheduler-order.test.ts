import { describe, expect, it } from "vitest";
import { ManualTickClock, SingleTimerClock, TickScheduler } from "../src/index.js";
import { countingClock } from "./counting-clock.js";


describe("TickScheduler", () => {
  it("runs thousands of tasks in (deadline, start order) with cancels and stops mixed in, as a sorted list would", () => {
    // A small deterministic generator: the same run every time.
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const clock = new ManualTickClock(0);
    // Quarter-ms starts as given (no slot grid), so ties come from equal starts only.
    const scheduler = new TickScheduler({ clock, slotMs: 0 });
    const ran: Array<[number, number]> = [];
    const expected: Array<[number, number]> = [];
    // Reference: each task's next deadlines, kept apart from the scheduler.
    const tasks: Array<{ id: number; start: number; stopAfter: number; cancelAt: number; handle: ReturnType<TickScheduler["schedule"]> }> = [];
    for (let id = 0; id < 3000; id++) {
      // Coarse starts, so many deadlines tie and the start order decides.
      const start = Math.floor(random() * 40) / 4;
      const stopAfter = 1 + Math.floor(random() * 6);
      const cancelAt = random() < 0.2 ? start + 33 * (1 + Math.floor(random() * 4)) - 0.5 : Number.POSITIVE_INFINITY;
      let runs = 0;
      const handle = scheduler.schedule((info) => {
        ran.push([info.scheduledMs, id]);
        return ++runs < stopAfter;
      }, start);
      tasks.push({ id, start, stopAfter, cancelAt, handle });
    }
    const cancels = tasks.filter((t) => Number.isFinite(t.cancelAt)).sort((a, b) => a.cancelAt - b.cancelAt);
    for (const t of cancels) {
      clock.advanceTo(t.cancelAt);
      t.handle.cancel();
    }
    clock.advanceTo(33 * 8);
    for (const t of tasks) {
      for (let k = 1; k <= t.stopAfter; k++) {
        const at = t.start + 33 * k;
        if (at >= t.cancelAt) break;
        expected.push([at, t.id]);
      }
    }
    expected.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(ran).toEqual(expected);
    expect(scheduler.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it("arms no timer for a task cancelled before its deadline", () => {
    const { clock, counting, armed } = countingClock(0);
    const scheduler = new TickScheduler({ clock: counting });
    const first = scheduler.schedule(() => {}, 0);
    let later = 0;
    scheduler.schedule(() => void later++, 10);
    expect(armed()).toBe(1);
    first.cancel();
    // Re-armed for the next live task's deadline (43), not woken at 33 for nothing.
    expect(armed()).toBe(2);
    clock.advanceTo(42.9);
    expect(later).toBe(0);
    clock.advanceTo(43);
    expect(later).toBe(1);
    expect(armed()).toBe(3);
  });

  it("shows every run's TickInfo to its observer before the task's function", () => {
    const clock = new ManualTickClock(0);
    const seen: string[] = [];
    const scheduler = new TickScheduler({ clock, observe: (info) => void seen.push(`observe k${info.k} late ${info.latenessMs}`) });
    scheduler.schedule((info) => void seen.push(`task k${info.k}`));
    clock.advance(33);
    clock.jump(33 + 5); // the timer is 5 ms late
    clock.runDue();
    expect(seen).toEqual(["observe k1 late 0", "task k1", "observe k2 late 5", "task k2"]);
  });

  it("re-arms for a task with an earlier deadline", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const runs: string[] = [];
    scheduler.schedule(() => void runs.push("late"), 20);
    scheduler.schedule(() => void runs.push("early"), 0);
    expect(clock.pendingTimers).toBe(1);
    clock.advanceTo(33);
    expect(runs).toEqual(["early"]);
    clock.advanceTo(53);
    expect(runs).toEqual(["early", "late"]);
  });

  it("stops a task that returns false or is cancelled, and disarms when idle", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    let a = 0;
    let b = 0;
    const taskA = scheduler.schedule(() => ++a < 3);
    const taskB = scheduler.schedule(() => void b++);
    clock.advance(33 * 5);
    expect(a).toBe(3);
    expect(taskA.active).toBe(false);
    expect(b).toBe(5);
    taskB.cancel();
    taskB.cancel();
    expect(taskB.active).toBe(false);
    expect(scheduler.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(33 * 5);
    expect(b).toBe(5);
  });

  it("lets a task cancel another or schedule a new one while running", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const log: string[] = [];
    const victim = scheduler.schedule(() => void log.push("victim"), 1);
    scheduler.schedule(({ k }) => {
      log.push(`killer ${k}`);
      victim.cancel();
      if (k === 1) scheduler.schedule(() => void log.push("child"));
      return k < 2;
    }, 0);
    clock.advance(33 * 3);
    expect(log).toEqual(["killer 1", "killer 2", "child", "child"]);
  });

  it("stops a task that throws and reports it, without touching the others", () => {
    const clock = new ManualTickClock(0);
    const errors: unknown[] = [];
    const scheduler = new TickScheduler({ clock, onError: (err) => errors.push(err) });
    let ok = 0;
    const bad = scheduler.schedule(() => {
      throw new Error("boom");
    });
    scheduler.schedule(() => void ok++);
    clock.advance(33 * 3);
    expect(errors).toEqual([new Error("boom")]);
    expect(bad.active).toBe(false);
    expect(ok).toBe(3);
  });

  it("stop() ends everything", () => {
    const clock = new ManualTickClock(0);
    const scheduler = new TickScheduler({ clock });
    const tasks = [scheduler.schedule(() => {}), scheduler.schedule(() => {})];
    scheduler.stop();
    expect(tasks.every((t) => !t.active)).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it("rejects a bad period", () => {
    expect(() => new TickScheduler({ periodMs: 0 })).toThrow(RangeError);
    expect(() => new TickScheduler({ periodMs: Number.NaN })).toThrow(RangeError);
  });

  it("with real timers, holds 33 ms on average", async () => {
    const scheduler = new TickScheduler();
    const times: number[] = [];
    const start = performance.now();
    await new Promise<void>((resolve) => {
      scheduler.schedule(() => {
        times.push(performance.now());
        if (times.length < 30) return true;
        resolve();
        return false;
      }, start);
    });
    expect(times[0]! - start).toBeGreaterThanOrEqual(33);
    const period = (times[29]! - times[0]!) / 29;
    expect(period).toBeGreaterThan(32);
    expect(period).toBeLessThan(34);
  });
});

describe("SingleTimerClock", () => {
  it("reads whole ms and fires its one timer at its due time; arming again replaces it, clearing cancels it", () => {
    const clock = new SingleTimerClock();
    const fired: [string, number][] = [];
    clock.setTimer(() => fired.push(["first", clock.now()]), 2.5);
    clock.setTimer(() => fired.push(["second", clock.now()]), 1.2);
    clock.advance(5);
    expect(fired).toEqual([["second", 2]]);
    expect(clock.now()).toBe(5);
    clock.setTimer(() => fired.push(["cleared", clock.now()]), 1);
    clock.clearTimer();
    clock.advance(5);
    expect(fired).toHaveLength(1);
    // A timer armed while firing runs in the same advance when due by then.
    clock.setTimer(() => {
      fired.push(["re-arms", clock.now()]);
      clock.setTimer(() => fired.push(["re-armed", clock.now()]), 3);
    }, 1);
    clock.advance(4);
    expect(fired.slice(1)).toEqual([["re-arms", 11], ["re-armed", 14]]);
  });
});

describe("after a stall", () => {
  it("runs each due task once per timer callback, so other work gets a turn between rounds", () => {
    const clock = new ManualTickClock();
    const scheduler = new TickScheduler({ clock, periodMs: 33 });
    const runs: number[] = [];
    // A tick that itself takes 100 ms: every time it finishes, its next deadline is already due.
    scheduler.schedule((info) => {
      runs.push(info.k);
      clock.jump(100);
      return runs.length < 50;
    }, clock.now());
    const fired: number[] = [];
    // Something else waiting for its turn, due 1 ms after the first tick.
    clock.setTimer(() => fired.push(runs.length), 34);
    clock.advance(40);
    // The other timer ran after the first round, not after the game had ticked 50 times.
    expect(fired).toHaveLength(1);
    expect(fired[0]).toBeLessThanOrEqual(2);
  });
});
