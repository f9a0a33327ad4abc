import { pascalCase } from "./naming.js";
import { REGION_RE } from "./options.js";
import type { TaskSize } from "./task-size.js";
import { type LoadGeneratorPlan, PlanError, type ServicePlan } from "./types.js";

// Bot players in the cloud: `pnpm load` as ECS services, N tasks per region, off unless asked for.

/** What the load generators are asked for (FLAPLAB_LOAD_TASKS, FLAPLAB_LOAD_ARGS). */
export interface LoadRequest {
  /** Tasks per region; a region not named runs none. */
  readonly tasks: ReadonlyMap<string, number>;
  /** `pnpm load`'s options besides the deployment's URLs, e.g. `--players 200 --duration 10m`. */
  readonly args: readonly string[];
}

/** One task: one vCPU, the load generator's one worker process (`--workers 1`). */
export const LOAD_TASK_SIZE: TaskSize = { cpu: "1 vCPU", memory: "2 GB" };
/** The built load generator in the server image. */
export const LOAD_ENTRY = "/app/apps/load/dist/main.js";
/** The most tasks per region a plan accepts (a guard against a typo, not an AWS limit). */
export const MAX_LOAD_TASKS = 100;
/** The URL options the plan sets itself; `FLAPLAB_LOAD_ARGS` may not. */
const PLANNED_OPTIONS = ["--url", "--initiator-url", "--workers"];

/**
 * FLAPLAB_LOAD_TASKS: `0` or empty (off, the default), `N` (N tasks in every region of the stage),
 * or `us-east-1=2,eu-west-1=1`; and FLAPLAB_LOAD_ARGS, split on white space. Throws PlanError.
 */
export function parseLoadRequest(tasksText: string | undefined, argsText: string | undefined, regions: readonly string[]): LoadRequest {
  const args = (argsText ?? "").trim().split(/\s+/).filter((a) => a.length > 0);
  for (const a of args) {
    const name = a.split("=")[0]!;
    if (PLANNED_OPTIONS.includes(name)) throw new PlanError(`FLAPLAB_LOAD_ARGS: ${name} is set by the plan (the stage's own URLs, one worker per task)`);
  }
  const text = (tasksText ?? "").trim();
  const tasks = new Map<string, number>();
  if (text === "" || text === "0") return { tasks, args };
  const count = (s: string, what: string): number => {
    if (!/^\d+$/.test(s) || Number(s) > MAX_LOAD_TASKS) {
      throw new PlanError(`FLAPLAB_LOAD_TASKS: ${what} must be a whole number from 0 to ${MAX_LOAD_TASKS}, got "${s}"`);
    }
    return Number(s);
  };
  if (/^\d+$/.test(text)) {
    const n = count(text, "the task count");
    for (const r of regions) tasks.set(r, n);
    return { tasks, args };
  }
  for (const part of text.split(",")) {
    const [region, n, extra] = part.trim().split("=");
    if (region === undefined || n === undefined || extra !== undefined || !REGION_RE.test(region)) {
      throw new PlanError(`FLAPLAB_LOAD_TASKS: "${part.trim()}" is not <region>=<tasks> (e.g. us-east-1=2), nor is the whole a task count`);
    }
    if (!regions.includes(region)) {
      throw new PlanError(`FLAPLAB_LOAD_TASKS: the stage has no cluster in ${region}; its regions are ${regions.join(", ")}`);
    }
    if (tasks.has(region)) throw new PlanError(`FLAPLAB_LOAD_TASKS: ${region} is named twice`);
    tasks.set(region, count(n, region));
  }
  return { tasks, args };
}

/** One service per region that asked for tasks; each task plays against the stage's public auth and initiator. */
export function planLoadGenerators(request: LoadRequest, services: readonly ServicePlan[]): LoadGeneratorPlan[] {
  const urlOf = (component: string): string => {
    const s = services.find((x) => x.components.some((c) => c === component) && x.publicUrl !== undefined);
    if (!s?.publicUrl) throw new PlanError(`load generators: no public URL for ${component}`);
    return s.publicUrl;
  };
  const plans: LoadGeneratorPlan[] = [];
  for (const [region, tasks] of [...request.tasks].sort(([a], [b]) => a.localeCompare(b))) {
    if (tasks === 0) continue;
    plans.push({
      name: `Load${pascalCase(region)}`,
      region,
      tasks,
      size: LOAD_TASK_SIZE,
      command: ["node", "--conditions=built", LOAD_ENTRY, "--url", urlOf("auth"), "--initiator-url", urlOf("initiator"), "--workers", "1", ...request.args],
    });
  }
  return plans;
}
