import { buildTimeline, goalFor, search } from "./src/autopilot.js";
import { generateWorld } from "@flaplab/worldgen";
import { snapshotCourse, DEFAULT_BIRD } from "@flaplab/physics";
for (const seed of [6977347407732442987n, 8525333463046388971n]) {
const course = snapshotCourse(generateWorld(seed, { width: 480, height: 640 }));
const tl = buildTimeline(course, DEFAULT_BIRD, Infinity);
const goal = goalFor(tl, Number(process.argv[3] ?? 30))!;
for (const M of [0, 2, 4, 7, 10, 14]) {
  const t0 = performance.now();
  const r = search(tl, goal, 24, Number(process.argv[2] ?? 2), M, 1280);
  console.log(String(seed).slice(0,4), M, (performance.now() - t0).toFixed(0), r.reach, r.found?.margin.toFixed(2), r.found?.flapTicks.length);
}
}
