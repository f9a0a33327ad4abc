import { buildTimeline, goalFor, search, checkPlan } from "./src/autopilot.js";
import { generateWorld } from "@flaplab/worldgen";
import { snapshotCourse, DEFAULT_BIRD } from "@flaplab/physics";
const seed = BigInt(process.argv[2]);
const course = snapshotCourse(generateWorld(seed, { width: 480, height: 640 }));
const tl = buildTimeline(course, DEFAULT_BIRD, Infinity);
const goal = goalFor(tl, 30)!;
const r = search(tl, goal, 24, 2, Number(process.argv[3]), 1280);
const flaps = r.found!.flapTicks;
const c = checkPlan(seed, flaps);
console.log(c.score, c.ticks, c.minMargin, c.robust);
const worst = [...c.shifts].sort((a, b) => a.margin - b.margin).slice(0, 8);
for (const w of worst) console.log(w, flaps.slice(Math.max(0, w.flap - 2), w.flap + 3));
console.log(flaps.join(","));
import { simulate } from "./src/simulate.js";
const base = simulate({ seed, flapTicks: flaps });
for (const J of [1, 2]) {
  let ok = 0; const N = 2000;
  for (let i = 0; i < N; i++) {
    const f = flaps.map((k) => Math.max(1, k + Math.floor(Math.random() * (2 * J + 1)) - J));
    const r = simulate({ seed, flapTicks: f });
    if (r.score === base.score && r.ticks === base.ticks) ok++;
  }
  console.log("joint jitter ±", J, ok / N);
}
