import { planGame } from "./src/autopilot.js";
for (const s of [6977347407732442987n, 8525333463046388971n]) {
  const t0 = performance.now();
  const p = planGame(s, {});
  console.log(s, (performance.now()-t0).toFixed(0), "ms", JSON.stringify({...p, flapTicks: p.flapTicks.length}), p.flapTicks.join(","));
}
