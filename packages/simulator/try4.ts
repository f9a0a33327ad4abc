import { buildTimeline, goalFor, search } from "./src/autopilot.js";
import { generateWorld } from "@flaplab/worldgen";
import { snapshotCourse, DEFAULT_BIRD } from "@flaplab/physics";
const seed = 8525333463046388971n;
const course = snapshotCourse(generateWorld(seed, { width: 480, height: 640 }));
const tl = buildTimeline(course, DEFAULT_BIRD, Infinity);
const goal = goalFor(tl, 30)!;
for (let i = 0; i < 2; i++) { const t0 = performance.now(); const r = search(tl, goal, 24, 2, 8, 1280); console.log((performance.now() - t0).toFixed(0), r.found?.margin, (globalThis as any).C1, (globalThis as any).C2, (globalThis as any).C3); }
