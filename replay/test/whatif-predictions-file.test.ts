import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PredictionsFileError, readPredictionsFile, type WhatifPredictionsFile, WHATIF_FILE, writePredictionsFile } from "../src/whatif/predictions-file.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-whatif-file-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const FILE: WhatifPredictionsFile = {
  format: "flaplab-whatif/1",
  model: { study: "results/study", fittedOn: ["monolith", "microservices"] },
  placements: [
    {
      deployment: "monolith",
      description: "auth+initiator+worldgen+engine+music+score @us-east-1a",
      origin: "standard",
      inRepository: true,
      predicted: { "6977347407732442987": { input_to_audio: 4.5, input_to_effect: 3, start_game: 27 } },
    },
    {
      deployment: "whatif-new-1",
      description: "auth+initiator+worldgen @us-east-1a | engine+music @eu-west-1a | score @us-east-1a",
      origin: "generated",
      inRepository: false,
      predicted: { "6977347407732442987": { input_to_audio: 40, input_to_effect: 38, start_game: 250 } },
    },
  ],
};

/** Writes `value` (JSON unless a string) and returns what reading it throws. */
async function readError(value: unknown): Promise<string> {
  const path = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, typeof value === "string" ? value : JSON.stringify(value));
  const err = await readPredictionsFile(path).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PredictionsFileError);
  return (err as Error).message.replace(path, "<file>");
}

describe("whatif.json", () => {
  it("is called whatif.json and reads back what was written", async () => {
    expect(WHATIF_FILE).toBe("whatif.json");
    const path = join(dir, "nested", WHATIF_FILE);
    await writePredictionsFile(path, FILE);
    expect(await readPredictionsFile(path)).toEqual(FILE);
    expect((await readFile(path, "utf8")).endsWith("}\n")).toBe(true);
  });

  it("names the file and the bad field", async () => {
    const wrongType = structuredClone(FILE) as unknown as { placements: { predicted: Record<string, Record<string, unknown>> }[] };
    wrongType.placements[1]!.predicted["6977347407732442987"]!["input_to_effect"] = "38";
    expect(await readError(wrongType)).toBe("<file>: placements[1].predicted.6977347407732442987.input_to_effect: Invalid input: expected number, received string");
    expect(await readError({ ...FILE, format: "flaplab-whatif/2" })).toBe('<file>: format: Invalid input: expected "flaplab-whatif/1"');
    expect(await readError({ ...FILE, placements: [{ ...FILE.placements[0], origin: "imagined" }] })).toMatch(/^<file>: placements\[0\]\.origin: Invalid option: expected one of "standard"\|"generated"\|"recommended"$/);
    expect(await readError({ ...FILE, model: { study: "s" } })).toBe("<file>: model.fittedOn: Invalid input: expected array, received undefined");
    expect(await readError({ ...FILE, placements: [FILE.placements[0], FILE.placements[0]] })).toBe('<file>: placements[1].deployment: "monolith" is named by an earlier placement too');
    expect(await readError([])).toBe("<file>: (the whole file): Invalid input: expected object, received array");
    expect(await readError("{ broken")).toMatch(/^<file>: not JSON: /);
  });

  it("says when the file cannot be read", async () => {
    const path = join(dir, "absent.json");
    await expect(readPredictionsFile(path)).rejects.toThrow(`${path}: cannot be read: ENOENT`);
  });

  it("refuses to write what it could not read back", async () => {
    const path = join(dir, "refused.json");
    const bad = { ...FILE, placements: [{ ...FILE.placements[0]!, predicted: { s: { input_to_audio: Number.NaN, input_to_effect: 1, start_game: 1 } } }] };
    await expect(writePredictionsFile(path, bad)).rejects.toThrow(`${path}: placements[0].predicted.s.input_to_audio: `);
    await expect(readFile(path)).rejects.toThrow("ENOENT");
  });
});
