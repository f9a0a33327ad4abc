import { buildTimeline } from "./src/autopilot.js";
import { simulateCourse } from "./src/simulate.js";
import { generateWorld } from "@flaplab/worldgen";
import { snapshotCourse, DEFAULT_BIRD } from "@flaplab/physics";
const seed = 6977347407732442987n;
const course = snapshotCourse(generateWorld(seed, { width: 480, height: 640 }));
const tl = buildTimeline(course, DEFAULT_BIRD, Infinity);
console.log(tl.length, tl.courseEndTick);
for (let t = 700; t < 800; t++) console.log(t, tl.score[t], tl.lo[t], tl.hi[t]);
