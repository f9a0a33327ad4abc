import { autopilotTicks, courseFor, EASY_SEED, findFlapSchedule } from "./autopilot.js";
import { simulateCourse } from "@flaplab/simulator";
const c = courseFor(EASY_SEED);
for (const g of [2, 4]) { try { console.time("g"+g); const f = autopilotTicks(c, 0, 6000, g); console.timeEnd("g"+g); console.log(g, f.length, simulateCourse(c, f)); } catch (e) { console.timeEnd("g"+g); console.log(g, String(e)); } }
console.time("find"); const s = findFlapSchedule(); console.timeEnd("find"); console.log(s.survivesTicks, s.flapTicks.length);
