import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { describeMachine } from "../src/machine.js";
import { mergeResults, readPreviousResults, renderResults, RESULTS_FORMAT, type Results, type StoredSection } from "../src/results.js";

const ORDER = ["calls", "load", "browser"];
const machine = describeMachine();

function section(title: string, startedAt: string, measured: string): StoredSection {
  return {
    title,
    startedAt,
    seconds: 1,
    loadAvg1m: [0.5, 0.6],
    notes: [`note of ${title}`],
    goals: [{ section: title, goal: `${title} goal`, measured, met: false }],
    table: { headers: ["a"], align: ["l"], rows: [[measured]] },
    data: { measured },
  };
}

const FULL: Results = {
  format: RESULTS_FORMAT,
  quick: false,
  startedAt: "2026-01-01T00:00:00.000Z",
  seconds: 200,
  machine,
  sections: {
    calls: section("calls", "2026-01-01T00:00:00.000Z", "old calls"),
    load: section("load", "2026-01-01T00:00:00.000Z", "old load"),
    browser: section("browser", "2026-01-01T00:00:00.000Z", "old browser"),
  },
  failures: [],
  goals: [],
};

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("mergeResults", () => {
  it("replaces the sections this run measured and keeps the others, in section order", () => {
    const merged = mergeResults(
      ORDER,
      { format: RESULTS_FORMAT, quick: false, startedAt: "2026-02-02T00:00:00.000Z", seconds: 90, machine, sections: { browser: section("browser", "2026-02-02T00:00:00.000Z", "new browser") }, failures: [] },
      FULL,
    );
    expect(Object.keys(merged.sections)).toEqual(ORDER);
    expect(merged.sections["browser"]!.goals[0]!.measured).toBe("new browser");
    expect(merged.sections["calls"]!.startedAt).toBe("2026-01-01T00:00:00.000Z");
    expect(merged.goals.map((g) => g.measured)).toEqual(["old calls", "old load", "new browser"]);
    const md = renderResults(merged, "header");
    expect(md).toContain("_Measured in the run of 2026-01-01T00:00:00.000Z._");
    expect(md).toContain("_Measured in the run of 2026-02-02T00:00:00.000Z._");
  });

  it("drops an old section when this run tried it and failed, and keeps nothing without previous results", () => {
    const current = { format: RESULTS_FORMAT, quick: false, startedAt: "2026-02-02T00:00:00.000Z", seconds: 1, machine, sections: {}, failures: [{ id: "load", error: "boom" }] } as const;
    expect(Object.keys(mergeResults(ORDER, current, FULL).sections)).toEqual(["calls", "browser"]);
    expect(mergeResults(ORDER, current, undefined).sections).toEqual({});
  });
});

describe("readPreviousResults", () => {
  it("reads results of the same kind only, and ignores a missing or broken file", async () => {
    dir = await mkdtemp(join(tmpdir(), "flaplab-bench-results-"));
    expect(await readPreviousResults(dir, false)).toBeUndefined();
    await writeFile(join(dir, "latest.json"), JSON.stringify(FULL));
    expect((await readPreviousResults(dir, false))?.sections["calls"]?.title).toBe("calls");
    expect(await readPreviousResults(dir, true)).toBeUndefined();
    await writeFile(join(dir, "latest.json"), "{ not json");
    expect(await readPreviousResults(dir, false)).toBeUndefined();
  });
});
