import { ManualTickClock, type TickClock } from "../src/index.js";

/** A ManualTickClock that also counts the timers armed. */
export function countingClock(start = 1000) {
  const clock = new ManualTickClock(start);
  let armed = 0;
  const counting: TickClock = {
    now: () => clock.now(),
    setTimer: (fn, ms) => {
      armed++;
      return clock.setTimer(fn, ms);
    },
    clearTimer: (h) => clock.clearTimer(h),
  };
  return { clock, counting, armed: () => armed };
}
