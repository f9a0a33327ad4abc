import type { ComponentCpu } from "./model.js";
import type { StudyRun } from "./study.js";

// Each component's CPU from the runs where it had a process of its own: CPU of a run = once per
// game + per second of play × the game's seconds, by least squares over runs of different lengths.

export function cpuByComponent(runs: readonly StudyRun[]): ComponentCpu[] {
  const components = [...new Set(runs.flatMap((r) => r.serverCpu?.groups.filter((g) => g.components.length === 1).map((g) => g.components[0]!) ?? []))].sort();
  return components.map((component) => {
    const xs: number[] = [];
    const ys: number[] = [];
    let handled = 0;
    const verbs = new Map<string, number>();
    for (const run of runs) {
      const g = run.serverCpu?.groups.find((x) => x.components.length === 1 && x.components[0] === component);
      if (g === undefined) continue;
      xs.push(run.ticks / 30);
      ys.push(g.cpuUs);
      for (const c of run.calls) {
        if (c.side !== "client" || c.dst !== component) continue;
        handled++;
        verbs.set(c.dstVerb, (verbs.get(c.dstVerb) ?? 0) + 1);
      }
    }
    const { perGame, perSecond } = splitCpu(xs, ys);
    const total = ys.reduce((a, b) => a + b, 0);
    return {
      component,
      runs: xs.length,
      perGameUs: perGame,
      perGameSecondUs: perSecond,
      // The engine's work is its ticks, not the calls it handles.
      perCallUs: handled > 0 && component !== "engine" ? total / handled : null,
      calls: [...verbs].map(([v, n]) => `${v} ×${n}`).join(", "),
    };
  });
}

/**
 * CPU = perGame + perSecond × seconds by least squares, both ≥ 0. Runs all of one length cannot
 * split the two: everything per second then.
 */
export function splitCpu(seconds: readonly number[], cpuUs: readonly number[]): { perGame: number; perSecond: number } {
  const n = seconds.length;
  if (n === 0) return { perGame: 0, perSecond: 0 };
  const mx = seconds.reduce((a, b) => a + b, 0) / n;
  const my = cpuUs.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (seconds[i]! - mx) ** 2;
    sxy += (seconds[i]! - mx) * (cpuUs[i]! - my);
  }
  if (sxx < 1e-9) return { perGame: 0, perSecond: mx > 0 ? my / mx : 0 };
  let perSecond = Math.max(0, sxy / sxx);
  let perGame = my - perSecond * mx;
  if (perGame < 0) {
    perGame = 0;
    perSecond = seconds.reduce((s, x, i) => s + x * cpuUs[i]!, 0) / seconds.reduce((s, x) => s + x * x, 0);
  }
  return { perGame, perSecond };
}
