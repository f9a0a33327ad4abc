import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { loadTopology, type Topology } from "@flaplab/runtime";
import { discoverRuns, type RunData, type ServerCpuView } from "../report/load.js";
import { WhatifInputError } from "./errors.js";

// A study's runs as the model reads them: each run's measured medians, its call records (with the
// caller's verb and when each call ended) and its servers' CPU, with the topology it ran.

/** The player-visible metrics the model predicts. */
export const PREDICTED_METRICS = ["input_to_audio", "input_to_effect", "start_game"] as const;
export type PredictedMetric = (typeof PREDICTED_METRICS)[number];

/** One call record of a run's call log (rpc.ndjson), the fields the model uses. */
export interface CallEntry {
  readonly src: string;
  readonly srcVerb: string;
  readonly dst: string;
  readonly dstVerb: string;
  readonly gameId: string;
  /** "client": the caller's whole call; "server": the callee's own time of a networked call. */
  readonly side: "client" | "server";
  readonly ms: number;
  /** When the record was written (the call's end), epoch ms. */
  readonly endMs: number;
}

export interface StudyRun {
  readonly dir: string;
  readonly deployment: string;
  readonly seed: string;
  readonly topology: Topology;
  /** Game length in ticks (30 a second). */
  readonly ticks: number;
  /** The run's samples of each predicted metric, ms. */
  readonly samples: Readonly<Record<PredictedMetric, readonly number[]>>;
  readonly calls: readonly CallEntry[];
  readonly serverCpu: ServerCpuView | null;
}

export interface Study {
  readonly dir: string;
  readonly runs: readonly StudyRun[];
  /** Deployments in the order first found. */
  readonly deployments: readonly string[];
  readonly seeds: readonly string[];
}

/** Reads every usable run below `dir` (its `runs/` folder when there is one); throws WhatifInputError when there is none. */
export async function loadStudy(dir: string, topologiesDir: string): Promise<Study> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new WhatifInputError(`no study folder at ${dir}`);
  const root = existsSync(join(dir, "runs")) ? join(dir, "runs") : dir;
  const { runs } = await discoverRuns(root);
  const topologies = new Map<string, Topology>();
  const out: StudyRun[] = [];
  for (const run of runs) {
    if (run.source !== "flaplab" || run.status !== "ok" || run.values === null || run.ticks === null) continue;
    const name = await topologyName(run);
    let topology = topologies.get(name);
    if (topology === undefined) {
      // A topology file the study ran is kept in its topologies/ folder; a name is the repository's.
      const kept = join(dir, "topologies");
      const from = existsSync(join(kept, `${name}.json`)) ? kept : topologiesDir;
      topology = await loadTopology(name, from).catch(() => {
        throw new WhatifInputError(`run ${run.dir}: its topology "${name}" is neither in ${kept} nor in ${topologiesDir}`);
      });
      topologies.set(name, topology);
    }
    out.push({
      dir: run.dir,
      deployment: run.deployment,
      seed: run.seed,
      topology,
      ticks: run.ticks,
      samples: {
        input_to_audio: run.values.input_to_audio ?? [],
        input_to_effect: run.values.input_to_effect ?? [],
        start_game: run.values.start_game ?? [],
      },
      calls: callsOf(run),
      serverCpu: run.serverCpu,
    });
  }
  if (out.length === 0) throw new WhatifInputError(`no usable runs in ${dir} (looked for run folders with summary.json, latency.csv and rpc.ndjson)`);
  return {
    dir,
    runs: out,
    deployments: [...new Set(out.map((r) => r.deployment))],
    seeds: [...new Set(out.map((r) => r.seed))],
  };
}

async function topologyName(run: RunData): Promise<string> {
  const summary: unknown = JSON.parse(await readFile(join(run.dir, "summary.json"), "utf8"));
  const deployment = (summary as { deployment?: { topology?: unknown } }).deployment;
  return typeof deployment?.topology === "string" && deployment.topology !== "" ? deployment.topology : run.deployment;
}

/** The calls the model reads from a run's call log (as the report parsed it): those that ended well, made by a component. */
export function callsOf(run: RunData): CallEntry[] {
  return run.rpc
    .filter((c) => c.ok && c.src !== "external")
    .map((c) => ({ src: c.src, srcVerb: c.srcVerb, dst: c.dst, dstVerb: c.verb, gameId: c.gameId, side: c.side === "callee" ? "server" : "client", ms: c.ms, endMs: c.endMs ?? 0 }));
}

/** The median of a list (NaN when empty). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
