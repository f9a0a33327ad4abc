import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPreciseTickClock, engineClockFromEnv, engineClockKindFromEnv, type PreciseTickClock, realTickClock, TickScheduler } from "../src/index.js";

const open: PreciseTickClock[] = [];
function clock(minIntervalMs?: number): PreciseTickClock {
  const c = createPreciseTickClock(minIntervalMs === undefined ? {} : { minIntervalMs });
  open.push(c);
  return c;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** Resolves with performance.now() when `c`'s timer armed for `delayMs` fires. */
function firedAt(c: PreciseTickClock, delayMs: number): Promise<number> {
  return new Promise((resolve) => c.setTimer(() => resolve(performance.now()), delayMs));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("createPreciseTickClock", () => {
  it("fires a timer once, never before its delay, with a fractional delay kept", async () => {
    const c = clock(0);
    let calls = 0;
    const armedAt = performance.now();
    const at = await new Promise<number>((resolve) =>
      c.setTimer(() => {
        calls++;
        resolve(performance.now());
      }, 7.4),
    );
    expect(at - armedAt).toBeGreaterThanOrEqual(7.4);
    await sleep(30);
    expect(calls).toBe(1);
  });

  it("runs a timer of delay 0 (or less) after the current code, not inside setTimer", async () => {
    const c = clock(0);
    const order: string[] = [];
    const done = new Promise<void>((resolve) =>
      c.setTimer(() => {
        order.push("timer");
        resolve();
      }, -5),
    );
    order.push("after setTimer");
    await done;
    expect(order).toEqual(["after setTimer", "timer"]);
  });

  it("never fires a cleared timer, and arming again replaces the timer armed before", async () => {
    const c = clock(0);
    const fired: string[] = [];
    const first = c.setTimer(() => fired.push("cleared"), 5);
    c.clearTimer(first);
    c.setTimer(() => fired.push("replaced"), 5);
    const last = firedAt(c, 10);
    await last;
    await sleep(20);
    expect(fired).toEqual([]);
  });

  it("ignores the handle of a timer that already fired: the one armed since stays armed", async () => {
    const c = clock(0);
    let stale: unknown;
    await new Promise<void>((resolve) => {
      stale = c.setTimer(resolve, 1);
    });
    const next = firedAt(c, 5);
    c.clearTimer(stale);
    await expect(next).resolves.toBeGreaterThan(0);
  });

  it("never fires early on its setTimeout fallback, though setTimeout may", async () => {
    // setTimeout counts whole ms of the event loop's clock, truncated: armed at x.9 ms for 5 ms, it
    // can fire at x+5.0, 4.1 ms later. Here every setTimeout fires 2 ms early (more than it ever
    // does, so that the test does not hang on this machine's timing).
    const realSetTimeout = globalThis.setTimeout;
    const early = vi
      .spyOn(globalThis, "setTimeout")
      .mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
        realSetTimeout(fn, Math.max(0, (ms ?? 0) - 2), ...args)) as typeof setTimeout);
    try {
      const c = clock(0); // its thread is not up yet: the timer goes on setTimeout
      const armedAt = performance.now();
      const at = await firedAt(c, 5);
      expect(early).toHaveBeenCalled();
      expect(at - armedAt).toBeGreaterThanOrEqual(5);
    } finally {
      early.mockRestore();
    }
  });

  it("starts two timer callbacks at least minIntervalMs apart", async () => {
    const c = clock(20);
    const first = await firedAt(c, 0);
    const second = await firedAt(c, 0);
    expect(second - first).toBeGreaterThanOrEqual(20);
  });

  it("refuses a negative or non-finite minIntervalMs, and timers after close", async () => {
    expect(() => createPreciseTickClock({ minIntervalMs: -1 })).toThrow(RangeError);
    expect(() => createPreciseTickClock({ minIntervalMs: Number.NaN })).toThrow(/minIntervalMs/);
    const c = clock();
    let fired = false;
    c.setTimer(() => {
      fired = true;
    }, 5);
    await c.close();
    await c.close();
    await sleep(20);
    expect(fired).toBe(false);
    expect(() => c.setTimer(() => {}, 1)).toThrow(/closed/);
  });

  it("drives a TickScheduler: every run at or after its deadline start + k·period", async () => {
    // slotMs 0: the starts stay a fraction of a ms apart, and so do the deadlines.
    const scheduler = new TickScheduler({ clock: clock(), periodMs: 10, slotMs: 0 });
    const runs: { k: number; scheduledMs: number; nowMs: number; latenessMs: number }[] = [];
    const start = performance.now();
    await new Promise<void>((resolve) => {
      for (let t = 0; t < 3; t++) {
        scheduler.schedule((info) => {
          runs.push({ ...info });
          if (info.k < 10) return true;
          if (runs.length === 30) resolve();
          return false;
        }, start + t * 3.3);
      }
    });
    expect(runs).toHaveLength(30);
    for (const run of runs) {
      expect(run.latenessMs).toBeGreaterThanOrEqual(0);
      expect(run.nowMs).toBeGreaterThanOrEqual(run.scheduledMs);
    }
    expect(runs.filter((r) => r.k === 10).map((r) => r.scheduledMs)).toEqual([start + 100, start + 3.3 + 100, start + 6.6 + 100]);
  });

  it("keeps the process alive while a timer is armed, and lets it exit once none is", () => {
    const script = fileURLToPath(new URL("./precise-clock-exit.child.ts", import.meta.url));
    const child = spawnSync(process.execPath, ["--import", "tsx", script], { encoding: "utf8", timeout: 20_000 });
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout.trim()).toBe("fired after 50 ms");
  });
});

describe("engineClockFromEnv", () => {
  it("gives setTimeout's clock by default, the precise one when asked, and names a bad value", async () => {
    const byDefault = engineClockFromEnv({});
    expect(byDefault.kind).toBe("timers");
    expect(byDefault.clock).toBe(realTickClock);
    const precise = engineClockFromEnv({ FLAPLAB_ENGINE_CLOCK: " precise " });
    expect(precise.kind).toBe("precise");
    expect(precise.clock).not.toBe(realTickClock);
    await precise.close();
    expect(() => engineClockFromEnv({ FLAPLAB_ENGINE_CLOCK: "fast" })).toThrow(/FLAPLAB_ENGINE_CLOCK must be "precise" or "timers", got "fast"/);
    expect(engineClockKindFromEnv({ FLAPLAB_ENGINE_CLOCK: "" })).toBe("timers");
    expect(engineClockKindFromEnv({ FLAPLAB_ENGINE_CLOCK: "precise" })).toBe("precise");
    expect(() => engineClockKindFromEnv({ FLAPLAB_ENGINE_CLOCK: "Precise" })).toThrow(RangeError);
  });
});
