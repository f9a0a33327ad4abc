import { nonNegativeLeastSquares } from "./least-squares.js";
import type { ComponentCpu } from "./model.js";
import type { StudyRun } from "./study.js";

// Each component's CPU from the runs where it had a process of its own. Where the runs watched
// the servers idle and split the play off (pnpm study does both), a run's CPU is taken apart:
// the process's idle background (µs a second, whatever it does), the start (login and StartGame,
// once per game) and the play (once per game + per second of play, by least squares over games of
// two lengths), each net of the idle background. Older runs: once per game + per second, idle in.

export function cpuByComponent(runs: readonly StudyRun[]): ComponentCpu[] {
  const components = [...new Set(runs.flatMap((r) => r.serverCpu?.groups.filter((g) => g.components.length === 1).map((g) => g.components[0]!) ?? []))].sort();
  return components.map((component) => {
    let handled = 0;
    const verbs = new Map<string, number>();
    const own: { run: StudyRun; g: NonNullable<StudyRun["serverCpu"]>["groups"][number] }[] = [];
    for (const run of runs) {
      const g = run.serverCpu?.groups.find((x) => x.components.length === 1 && x.components[0] === component);
      if (g === undefined) continue;
      own.push({ run, g });
      for (const c of run.calls) {
        if (c.side !== "client" || c.dst !== component) continue;
        handled++;
        verbs.set(c.dstVerb, (verbs.get(c.dstVerb) ?? 0) + 1);
      }
    }
    const total = own.reduce((s, o) => s + o.g.cpuUs, 0);
    const base = { component, runs: own.length, perCallUs: handled > 0 && component !== "engine" ? total / handled : null, calls: [...verbs].map(([v, n]) => `${v} ×${n}`).join(", ") };
    // The engine's work is its ticks, not the calls it handles.
    const idleRuns = own.filter((o) => o.g.idleCpuUs !== null && o.run.serverCpu!.idleWindowMs !== null);
    const split = own.filter((o) => o.g.playCpuUs !== null && o.run.serverCpu!.playWindowMs !== null);
    if (idleRuns.length === 0 || split.length === 0) {
      const { perGame, perSecond } = splitCpu(own.map((o) => o.run.ticks / 30), own.map((o) => o.g.cpuUs));
      return { ...base, idleUsPerSecond: null, startUs: null, perGameUs: perGame, perGameSecondUs: perSecond };
    }
    const idleUsPerSecond = idleRuns.reduce((s, o) => s + o.g.idleCpuUs!, 0) / (idleRuns.reduce((s, o) => s + o.run.serverCpu!.idleWindowMs!, 0) / 1000);
    const net = (cpuUs: number, ms: number) => cpuUs - (idleUsPerSecond * ms) / 1000;
    const starts = split.map((o) => net(o.g.cpuUs - o.g.playCpuUs!, o.run.serverCpu!.windowMs - o.run.serverCpu!.playWindowMs!));
    const startUs = Math.max(0, starts.reduce((a, b) => a + b, 0) / starts.length);
    const play = splitCpu(split.map((o) => o.run.ticks / 30), split.map((o) => net(o.g.playCpuUs!, o.run.serverCpu!.playWindowMs!)));
    return { ...base, idleUsPerSecond, startUs, perGameUs: startUs + play.perGame, perGameSecondUs: play.perSecond };
  });
}

/**
 * CPU = perGame + perSecond × seconds by least squares, both ≥ 0. Runs all of one length cannot
 * split the two: everything per second then (the first of two equal fits).
 */
export function splitCpu(seconds: readonly number[], cpuUs: readonly number[]): { perGame: number; perSecond: number } {
  if (seconds.length === 0) return { perGame: 0, perSecond: 0 };
  const [perSecond, perGame] = nonNegativeLeastSquares([seconds, seconds.map(() => 1)], cpuUs);
  return { perGame: perGame!, perSecond: perSecond! };
}
