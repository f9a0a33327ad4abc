import { parseTopology } from "@flaplab/runtime";
import { estimateHourlyCost, planDeployment, type CostEstimate, SINGLE_COPY_COMPONENTS, taskSizeFor, type TaskSize } from "@flaplab/infra";
import type { ComponentName } from "@flaplab/component";
import type { LoadCpu } from "./capacity-check.js";
import type { Layout } from "./layout.js";
import type { WhatifModel } from "./model.js";
import { topologyFile } from "./topology-file.js";

// The machines a placement needs for N players online: each group's CPU from the study's
// per-game and per-game-second CPU, Fargate tasks of infra's measured size, and infra's hourly
// cost of the resulting stage.

export interface CapacityRow {
  readonly group: string;
  readonly components: readonly ComponentName[];
  /** CPU the group's work and its tasks' idle background need, cores (before the target utilisation). */
  readonly cores: number;
  /** vCPU to provision: cores ÷ target utilisation. */
  readonly vcpu: number;
  readonly size: TaskSize;
  readonly tasks: number;
  readonly note: string;
}

export interface CapacityPlan {
  readonly playersOnline: number;
  readonly targetCpu: number;
  /** Mean game length the plan assumes, s (the study's seeds). */
  readonly gameSeconds: number;
  /** New games a second: players ÷ game length (one login and start per game, as in the study). */
  readonly gamesPerSecond: number;
  readonly rows: readonly CapacityRow[];
  /** Engine processes (each one task: a game's stream stays on its engine). */
  readonly engines: number;
  readonly cost: CostEstimate;
}

const PLAN_OPTIONS = { stage: "whatif", domain: "whatif.example.com" } as const;

/** The capacity of one placement; throws (infra's PlanError) when the placement cannot hold the engines it needs. */
export function capacityPlan(model: WhatifModel, layout: Layout, playersOnline: number, targetCpu: number, loadCpu?: readonly LoadCpu[]): CapacityPlan {
  const seconds = Object.values(model.gameSeconds);
  const gameSeconds = seconds.reduce((a, b) => a + b, 0) / seconds.length;
  const gamesPerSecond = playersOnline / gameSeconds;
  const cpu = new Map(model.cpu.map((c) => [c.component, c]));
  const underLoad = new Map((loadCpu ?? []).map((c) => [c.component, c]));
  const rows: CapacityRow[] = layout.map((g) => {
    const usPerSecond = g.components.reduce((s, c) => {
      const load = underLoad.get(c);
      if (load !== undefined) return s + playersOnline * load.perGameSecondUs + gamesPerSecond * load.startUs;
      const figures = cpu.get(c);
      if (figures === undefined) throw new Error(`the study has no CPU figures for ${c} in a process of its own`);
      return s + playersOnline * figures.perGameSecondUs + gamesPerSecond * figures.perGameUs;
    }, 0);
    // Each task's process also spends its idle background (where the study watched it idle) and, under load, its activity.
    const idleCores = g.components.reduce((s, c) => {
      const load = underLoad.get(c);
      return s + (load !== undefined ? load.idleUsPerSecond + load.activeUsPerSecond : (cpu.get(c)?.idleUsPerSecond ?? 0));
    }, 0) / 1e6;
    const size = taskSizeFor(g.components);
    const perTask = Number.parseFloat(size.cpu);
    const tasksFor = (cores: number) => Math.max(1, Math.ceil(cores / targetCpu / perTask));
    const work = usPerSecond / 1e6;
    // The fewest tasks whose vCPU hold the work and their own idle background.
    let tasks = tasksFor(work);
    for (let i = 0; i < 50 && tasksFor(work + idleCores * tasks) > tasks; i++) tasks = tasksFor(work + idleCores * tasks);
    const cores = work + idleCores * tasks;
    const vcpu = cores / targetCpu;
    const single = g.components.filter((c) => SINGLE_COPY_COMPONENTS.includes(c));
    let note = "";
    if (single.length > 0 && tasks > 1) {
      note = g.components.includes("engine") && g.components.length === 1
        ? `${tasks} engine processes of one task each (shards; a snapshot store)`
        : `${single.join(", ")} keeps one task: ${vcpu.toFixed(1)} vCPU do not fit one ${size.cpu} task`;
    }
    return { group: g.name, components: g.components, cores, vcpu, size, tasks, note };
  });
  const engineRow = rows.find((r) => r.components.length === 1 && r.components[0] === "engine");
  const engines = engineRow?.tasks ?? 1;
  // The stage as infra plans it with one engine; each engine shard is one more task of its size.
  // (Its load balancers route each engine group by rules of its own: the plan itself holds about
  // a hundred rules per region, fewer engine groups than a large player count needs.)
  const planOf = (shards: number) =>
    planDeployment(parseTopology(topologyFile(layout, { name: "whatif-capacity", description: "capacity plan", browser: layout[0]!, basePort: 7200, schemaRef: "", engines: shards })), PLAN_OPTIONS);
  const plan = planOf(1);
  // Several engines share a snapshot store: infra plans it (and checks their region) for a sharded topology.
  const snapshotStores = engines > 1 ? planOf(2).snapshotStores : plan.snapshotStores;
  const tasksOf = new Map(rows.map((r) => [r.group, r.tasks]));
  const services = plan.services.flatMap((s) => Array.from({ length: tasksOf.get(s.group) ?? 1 }, () => s));
  return { playersOnline, targetCpu, gameSeconds, gamesPerSecond, rows, engines, cost: estimateHourlyCost({ ...plan, services, snapshotStores }) };
}
