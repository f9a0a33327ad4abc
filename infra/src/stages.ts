import { resolve } from "node:path";
import { loadTopology, type Topology } from "@flaplab/runtime";

/** Cloud stages, each deployed from the topology file of the same name. */
export const STAGES = ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"] as const;
export type Stage = (typeof STAGES)[number];

/** The repository's topologies/ folder (infra/src → ../../topologies). */
export const TOPOLOGIES_DIR = resolve(import.meta.dirname, "../../topologies");

export function isStage(value: string): value is Stage {
  return (STAGES as readonly string[]).includes(value);
}

/** Path of the topology file a stage deploys. Throws for an unknown stage. */
export function stageTopology(stage: string, topologiesDir: string = TOPOLOGIES_DIR): string {
  if (!isStage(stage)) {
    throw new Error(`unknown stage "${stage}" (stages: ${STAGES.join(", ")})`);
  }
  return resolve(topologiesDir, `${stage}.json`);
}

/** Reads and validates a stage's topology file. */
export function loadStageTopology(stage: string, topologiesDir?: string): Promise<Topology> {
  return loadTopology(stageTopology(stage, topologiesDir));
}

