import type { ComponentName } from "@flaplab/component";
import { PlanError } from "./types.js";

// Fargate task sizes: what Fargate offers, what each component measured, and the size each group gets.

/** Fargate CPU sizes and the memory sizes each allows. */
export const FARGATE_SIZES = {
  "0.25 vCPU": ["0.5 GB", "1 GB", "2 GB"],
  "0.5 vCPU": ["1 GB", "2 GB", "3 GB", "4 GB"],
  "1 vCPU": ["2 GB", "3 GB", "4 GB", "5 GB", "6 GB", "7 GB", "8 GB"],
  "2 vCPU": ["4 GB", "5 GB", "6 GB", "7 GB", "8 GB", "9 GB", "10 GB", "11 GB", "12 GB", "13 GB", "14 GB", "15 GB", "16 GB"],
  "4 vCPU": ["8 GB", "10 GB", "12 GB", "14 GB", "16 GB", "20 GB", "24 GB", "28 GB", "30 GB"],
} as const;
export type FargateCpu = keyof typeof FARGATE_SIZES;
export type FargateMemory = `${number} GB`;
export interface TaskSize {
  readonly cpu: FargateCpu;
  readonly memory: FargateMemory;
}
/** The smallest Fargate task; no group gets it unless the options say so. */
export const DEFAULT_TASK_SIZE: TaskSize = { cpu: "0.25 vCPU", memory: "0.5 GB" };
/**
 * The largest CPU time a component's server used in one 100 ms window (Fargate's quota period: a
 * task over its share waits for the next period), in ms, one game at a time (the study's load):
 * `apps/server/test/measure-task-cpu.ts`, the built server on a loaded 2-vCPU VM, 2–3 rounds each.
 * auth: Register + Login, two scrypt hashes (1.1–1.8 s of CPU; a median window of 49–64 ms), in the
 * monolith; the others each in its own process of `microservices` over a whole game: the engine
 * 16–50 (0.34–0.51 s of CPU a game, median window 1.5–1.8 ms), worldgen 52–83 (GenerateWorld),
 * initiator 25–56, music 4–31, score 1–6 (SQLite here; Postgres over TLS in the cloud).
 */
export const MEASURED_PEAK_WINDOW_MS: Readonly<Record<ComponentName, number>> = {
  auth: 104,
  worldgen: 83,
  engine: 50,
  initiator: 56,
  music: 31,
  score: 6,
};
/** Share of the window a task's CPU must leave above a group's measured peak. */
export const CPU_HEADROOM = 1.25;
/** The sizes taskSizeFor picks from: each CPU with the smallest memory Fargate allows with it. */
export const MEASURED_TASK_SIZES = {
  half: { cpu: "0.5 vCPU", memory: "1 GB" },
  one: { cpu: "1 vCPU", memory: "2 GB" },
} as const satisfies Record<string, TaskSize>;
/** Fargate's CPU architecture for every task: Graviton (arm64), 20 % cheaper than x86_64 per vCPU and GB. */
export const TASK_ARCHITECTURE = "arm64";

/**
 * A group's task size from its components' measured peaks: 0.5 vCPU when its 50 ms share holds
 * the largest peak with CPU_HEADROOM, else 1 vCPU (the largest peak, auth's scrypt, is 1.04 cores
 * for a moment). Never 0.25 vCPU: its 25 ms share is below every peak but score's, and score's
 * Postgres TLS is not measured here. The monolith runs one phase at a time (a login, then a game):
 * measured whole, its peak was 93–104 ms, as auth's.
 */
export function taskSizeFor(components: readonly ComponentName[]): TaskSize {
  const peak = Math.max(0, ...components.map((c) => MEASURED_PEAK_WINDOW_MS[c]));
  return peak * CPU_HEADROOM <= 50 ? MEASURED_TASK_SIZES.half : MEASURED_TASK_SIZES.one;
}

/** A group's task size: its own from `sizes`, else `size`, else its measured size; refused unless Fargate offers it. */
export function groupTaskSize(
  options: { readonly size?: TaskSize | undefined; readonly sizes?: Readonly<Record<string, TaskSize>> | undefined },
  group: string,
  components: readonly ComponentName[],
): TaskSize {
  const size = options.sizes?.[group] ?? options.size ?? taskSizeFor(components);
  checkSize(size, group);
  return size;
}

function checkSize(size: TaskSize, group: string): void {
  const allowed = FARGATE_SIZES[size.cpu] as readonly string[] | undefined;
  if (!allowed) throw new PlanError(`group "${group}": cpu "${size.cpu}" is not a Fargate size`);
  if (!allowed.includes(size.memory)) {
    throw new PlanError(`group "${group}": ${size.cpu} allows ${allowed.join(", ")}, not ${size.memory}`);
  }
}
