import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";

// The predictions of a what-if validation (`pnpm whatif --validate`), written at the root of the
// study it ran (beside runs/ and report/) for the report's What-if section to set beside what the
// study measured.

export const WHATIF_FILE = "whatif.json";
export const WHATIF_FORMAT = "flaplab-whatif/1";

/** One placement's predicted medians for one seed, ms. */
export interface PredictedMedians {
  input_to_audio: number;
  input_to_effect: number;
  start_game: number;
}

export interface WhatifPlacement {
  /** The deployment name runs are filed under (runs/<deployment>/<seed>/run-NNN), e.g. "monolith", "whatif-new-1". */
  deployment: string;
  /** One line saying where each component runs, e.g. "auth+worldgen @us-east-1a | engine @eu-west-1a | …". */
  description: string;
  /** "standard": one of the repository's deployments; "generated": made by pnpm whatif; "recommended": the best for some players. */
  origin: "standard" | "generated" | "recommended";
  /** Whether some topology in the repository's topologies/ has this placement. */
  inRepository: boolean;
  /** Per seed (the run's seed string), the predicted medians in ms. */
  predicted: Record<string, PredictedMedians>;
}

export interface WhatifPredictionsFile {
  format: typeof WHATIF_FORMAT;
  /** The study folder the model was fitted on, and the deployments it was fitted on. */
  model: { study: string; fittedOn: string[] };
  placements: WhatifPlacement[];
}

/** A whatif.json that cannot be read or does not hold what the format says. */
export class PredictionsFileError extends Error {
  override readonly name = "PredictionsFileError";
}

const ms = z.number();

const placementSchema = z.object({
  deployment: z.string().min(1),
  description: z.string(),
  origin: z.enum(["standard", "generated", "recommended"]),
  inRepository: z.boolean(),
  predicted: z.record(z.string().min(1), z.object({ input_to_audio: ms, input_to_effect: ms, start_game: ms })),
});

const fileSchema = z.object({
  format: z.literal(WHATIF_FORMAT),
  model: z.object({ study: z.string(), fittedOn: z.array(z.string()) }),
  placements: z.array(placementSchema).superRefine((placements, ctx) => {
    const seen = new Set<string>();
    placements.forEach((p, i) => {
      if (seen.has(p.deployment)) ctx.addIssue({ code: "custom", path: [i, "deployment"], message: `"${p.deployment}" is named by an earlier placement too` });
      seen.add(p.deployment);
    });
  }),
}) satisfies z.ZodType<WhatifPredictionsFile>;

/** "placements[2].predicted.easy.start_game" from a validation issue's path. */
function fieldName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : `${out === "" ? "" : "."}${String(key)}`;
  return out === "" ? "(the whole file)" : out;
}

/** Checks a parsed whatif.json; throws PredictionsFileError naming `source` and the first bad field. */
export function parsePredictions(value: unknown, source: string): WhatifPredictionsFile {
  const result = fileSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new PredictionsFileError(`${source}: ${fieldName(issue.path)}: ${issue.message}`);
}

/** Reads and checks a whatif.json; throws PredictionsFileError naming the file and the bad field. */
export async function readPredictionsFile(path: string): Promise<WhatifPredictionsFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new PredictionsFileError(`${path}: cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new PredictionsFileError(`${path}: not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parsePredictions(value, path);
}

/** Checks `data` as the reader would and writes it as `path` (its folder created if missing). */
export async function writePredictionsFile(path: string, data: WhatifPredictionsFile): Promise<void> {
  const checked = parsePredictions(data, path);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(checked, null, 2)}\n`);
}
