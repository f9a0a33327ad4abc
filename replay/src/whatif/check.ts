import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { loadTopology } from "@flaplab/runtime";
import type { RttTable } from "@flaplab/netem";
import { DEPLOYMENT_ORDER as STUDY_DEPLOYMENTS } from "../report/aggregate.js";
import { WhatifInputError } from "./errors.js";
import { type GenerateOptions, spreadPlacements, placementKey, type Placed } from "./generate.js";
import { type Layout, type Location, layoutOf } from "./layout.js";
import type { WhatifModel } from "./model.js";
import { describeLayout } from "./placements.js";
import { predictMetric } from "./predict.js";
import { median, PREDICTED_METRICS, type PredictedMetric, type Study } from "./study.js";
import { WHATIF_FORMAT, type WhatifPredictionsFile } from "./predictions-file.js";
import { topologyFile } from "./topology-file.js";
import { type ValidationRow, validationRow } from "./validate.js";

// `pnpm whatif --validate`: the placements to check (the repository's four deployments and
// placements generated for the purpose), their predictions written down before anything runs, then
// set beside what the emulated study measured.

export type PlacementOrigin = "standard" | "generated" | "recommended";

export interface CheckedPlacement extends Placed {
  /** The name the study files its runs under (runs/<deployment>/…). */
  readonly deployment: string;
  /** What `pnpm study --deployments` takes: a repository name or a file. */
  readonly topology: string;
  readonly origin: PlacementOrigin;
  /** Whether a repository topology plays as this placement. */
  readonly inRepository: boolean;
  /** Per seed, the predicted medians, ms. */
  readonly predicted: Readonly<Record<string, Readonly<Record<PredictedMetric, number>>>>;
}

/** The repository's topologies (names and placements), for telling a new placement from a known one. */
export async function repositoryPlacements(dir: string): Promise<{ name: string; placed: Placed }[]> {
  const names = (await readdir(dir)).filter((f) => f.endsWith(".json") && f !== "rtt.json" && !f.endsWith(".schema.json")).map((f) => f.slice(0, -5));
  const out: { name: string; placed: Placed }[] = [];
  for (const name of names.sort()) {
    const t = await loadTopology(name, dir);
    out.push({ name, placed: { layout: layoutOf(t), browser: t.browser } });
  }
  return out;
}

function predictAll(model: WhatifModel, layout: Layout, browser: Location, table: RttTable): Record<string, Record<PredictedMetric, number>> {
  return Object.fromEntries(
    model.seeds.map((seed) => [seed, Object.fromEntries(PREDICTED_METRICS.map((m) => [m, predictMetric(model, seed, m, layout, browser, table).ms])) as Record<PredictedMetric, number>]),
  );
}

export interface PlanOptions extends GenerateOptions {
  /** Where the generated topology files go. */
  readonly dir: string;
  readonly topologiesDir: string;
}

/**
 * The four standard deployments and `count` generated placements with their predictions; writes the
 * generated ones as topology files into `dir`.
 */
export async function planCheck(model: WhatifModel, table: RttTable, options: PlanOptions): Promise<CheckedPlacement[]> {
  const repository = await repositoryPlacements(options.topologiesDir);
  const keys = new Set(repository.map((r) => placementKey(r.placed, table)));
  const out: CheckedPlacement[] = [];
  for (const name of STUDY_DEPLOYMENTS) {
    const r = repository.find((x) => x.name === name);
    if (r === undefined) throw new WhatifInputError(`the repository has no topology "${name}" in ${options.topologiesDir}`);
    out.push({ ...r.placed, deployment: name, topology: name, origin: "standard", inRepository: true, predicted: predictAll(model, r.placed.layout, r.placed.browser, table) });
  }
  const generated = spreadPlacements(model, table, { regions: options.regions, zones: options.zones, browser: options.browser, count: options.count }, repository.map((r) => r.placed));
  await mkdir(options.dir, { recursive: true });
  for (const [i, p] of generated.entries()) {
    const name = `whatif-check-${i + 1}`;
    const path = join(options.dir, `${name}.json`);
    const file = topologyFile(p.layout, {
      name,
      description: `A placement pnpm whatif --validate generated to check its prediction: ${describeLayout(p.layout)}; the player in ${options.browser.region}${options.browser.zone}.`,
      browser: options.browser,
      basePort: 7300 + 10 * i,
      schemaRef: relative(options.dir, join(options.topologiesDir, "topology.schema.json")),
    });
    await writeFile(path, `${JSON.stringify(file, null, 2)}\n`);
    const placed = { layout: p.layout, browser: options.browser };
    out.push({ ...placed, deployment: name, topology: path, origin: "generated", inRepository: keys.has(placementKey(placed, table)), predicted: predictAll(model, p.layout, options.browser, table) });
  }
  return out;
}

/** Each deployment a study ran, with its prediction (its topology as the study recorded it). */
export async function placementsOfStudy(model: WhatifModel, table: RttTable, study: Study, topologiesDir: string): Promise<CheckedPlacement[]> {
  const keys = new Set((await repositoryPlacements(topologiesDir)).map((r) => placementKey(r.placed, table)));
  return study.deployments.map((deployment) => {
    const t = study.runs.find((r) => r.deployment === deployment)!.topology;
    const placed = { layout: layoutOf(t), browser: t.browser };
    const standard = (STUDY_DEPLOYMENTS as readonly string[]).includes(deployment);
    return { ...placed, deployment, topology: t.name, origin: standard ? "standard" : "generated", inRepository: keys.has(placementKey(placed, table)), predicted: predictAll(model, placed.layout, placed.browser, table) };
  });
}

/** Every placement × seed × metric the study measured, predicted against measured. */
export function compareCheck(placements: readonly CheckedPlacement[], measured: Study, fittedOn: readonly string[]): ValidationRow[] {
  const rows: ValidationRow[] = [];
  for (const p of placements) {
    const runs = measured.runs.filter((r) => r.deployment === p.deployment);
    for (const seed of [...new Set(runs.map((r) => r.seed))]) {
      const seedRuns = runs.filter((r) => r.seed === seed);
      for (const metric of PREDICTED_METRICS) {
        const samples = seedRuns.flatMap((r) => r.samples[metric]);
        if (samples.length === 0) continue;
        const measuredMs = median(samples);
        rows.push(validationRow({ deployment: p.deployment, seed, metric, fittedOn }, p.predicted[seed]?.[metric] ?? null, measuredMs));
      }
    }
  }
  return rows;
}

/** The predictions file the study report reads (whatif.json beside runs/). */
export function predictionsFile(model: WhatifModel, placements: readonly CheckedPlacement[]): WhatifPredictionsFile {
  return {
    format: WHATIF_FORMAT,
    model: { study: model.study, fittedOn: [...model.fittedOn] },
    placements: placements.map((p) => ({
      deployment: p.deployment,
      description: describeLayout(p.layout),
      origin: p.origin,
      inRepository: p.inRepository,
      predicted: Object.fromEntries(Object.entries(p.predicted).map(([seed, m]) => [seed, { ...m }])),
    })),
  };
}
