// Run by precise-clock.test.ts in a child process: an armed timer keeps the process alive (the
// process would otherwise exit at once); once it has fired and nothing is armed, the waker thread
// does not hold the process, so it exits on its own (the test fails on its timeout otherwise).
import { createPreciseTickClock } from "../src/index.js";

const clock = createPreciseTickClock();
const armedAt = performance.now();
clock.setTimer(() => {
  const waited = performance.now() - armedAt;
  console.log(waited >= 50 ? "fired after 50 ms" : `fired early, after ${waited} ms`);
}, 50);
