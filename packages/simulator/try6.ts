import { buildTimeline, goalFor, search, checkPlan } from "./src/autopilot.js";
import { simulate } from "./src/simulate.js";
import { generateWorld } from "@flaplab/worldgen";
import { snapshotCourse, DEFAULT_BIRD } from "@flaplab/physics";
let rs = 12345;
const rnd = () => { rs = (rs * 1103515245 + 12345) % 2147483648; return rs / 2147483648; };
for (const seed of [6977347407732442987n, 8525333463046388971n]) {
const course = snapshotCourse(generateWorld(seed, { width: 480, height: 640 }));
const tl = buildTimeline(course, DEFAULT_BIRD, Infinity);
const goal = goalFor(tl, 30)!;
for (const M of (process.argv[2] ?? "0,4,8,12").split(",").map(Number)) {
  const t0 = performance.now();
  const r = search(tl, goal, 24, 2, M, 1280);
  const ms = (performance.now() - t0).toFixed(0);
  if (!r.found) { console.log(String(seed).slice(0,4), M, ms, "fail", r.reach); continue; }
  const flaps = r.found.flapTicks;
  const c = checkPlan(seed, flaps);
  const js: number[] = [];
  for (const J of [1, 2]) {
    let ok = 0; const N = 500;
    for (let i = 0; i < N; i++) {
      const f = flaps.map((k) => Math.max(1, k + Math.floor(rnd() * (2 * J + 1)) - J));
      const x = simulate({ seed, flapTicks: f });
      if (x.score === c.score && x.ticks === c.ticks) ok++;
    }
    js.push(ok / N);
  }
  console.log(String(seed).slice(0,4), M, ms, c.score, c.robust, c.minMargin.toFixed(2), flaps.length, "joint", js.join(" "));
}
}
