import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateReport, runReportCli } from "../../src/report/index.js";
import { whatifSection } from "../../src/report/whatif-section.js";
import { WHATIF_FILE, type WhatifPredictionsFile, writePredictionsFile } from "../../src/whatif/predictions-file.js";
import { removeTempDirs, rttRows, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";

afterAll(removeTempDirs);

/** A game of 15 presses whose sound comes `audioMs` and whose ack frame comes `effectMs` after each; start game `startMs`. */
function game(audioMs: number, effectMs: number, startMs: number): Row[] {
  const ticks = tickFrames(500, Array.from({ length: 400 }, () => 33));
  const rows: Row[] = [...rttRows(12.5, startMs), ...ticks];
  for (let j = 1; j <= 15; j++) {
    const sent = ticks[20 * j]!.time + 5;
    rows.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    rows.push({ type: "frame", direction: "recv", time: sent + effectMs, tick: 20 * j, reflectedSeq: j, bytes: 40, kind: "ack" });
    rows.push({ type: "audio", direction: "recv", time: sent + audioMs, seq: j, tick: 20 * j, sound: "flap", bytes: 30 });
  }
  return rows;
}

type Game = [audioMs: number, effectMs: number, startMs: number];

/**
 * Measured, two runs per deployment × seed. The pooled medians: monolith easy 3 / 1 / 25 (its two
 * runs sound after 2 and 4 ms: the median of the 30 pooled samples is 3), hard 3 / 1.5 / 40;
 * microservices easy 6 / 2 / 75, hard 6 / 2.5 / 90.
 */
const MEASURED: Record<string, Record<string, [Game, Game]>> = {
  monolith: {
    easy: [
      [2, 1, 20],
      [4, 1, 30],
    ],
    hard: [
      [3, 1.5, 40],
      [3, 1.5, 40],
    ],
  },
  microservices: {
    easy: [
      [5, 2, 70],
      [7, 2, 80],
    ],
    hard: [
      [6, 2.5, 90],
      [6, 2.5, 90],
    ],
  },
};

const PREDICTIONS: WhatifPredictionsFile = {
  format: "flaplab-whatif/1",
  model: { study: "results/study-a", fittedOn: ["monolith", "microservices"] },
  placements: [
    {
      deployment: "monolith",
      description: "auth+initiator+worldgen+engine+music+score @us-east-1a",
      origin: "standard",
      inRepository: true,
      predicted: { easy: { input_to_audio: 3.2, input_to_effect: 1.1, start_game: 24 }, hard: { input_to_audio: 2.9, input_to_effect: 1.4, start_game: 45 } },
    },
    {
      deployment: "microservices",
      description: "auth @us-east-1a | initiator @us-east-1a | worldgen @us-east-1a | engine @us-east-1a | music @us-east-1a | score @us-east-1a",
      origin: "standard",
      inRepository: true,
      predicted: { easy: { input_to_audio: 6.5, input_to_effect: 2, start_game: 90 }, hard: { input_to_audio: 5, input_to_effect: 2.5, start_game: 88 } },
    },
    {
      deployment: "whatif-new-1",
      description: "auth+initiator+worldgen @us-east-1a | engine+music @eu-west-1a | score @us-east-1a",
      origin: "generated",
      inRepository: false,
      predicted: { easy: { input_to_audio: 50, input_to_effect: 40, start_game: 300 }, hard: { input_to_audio: 52.1, input_to_effect: 41, start_game: 310 } },
    },
    {
      deployment: "whatif-lonely",
      description: "all @ap-northeast-1a",
      origin: "recommended",
      inRepository: false,
      predicted: { other: { input_to_audio: 9, input_to_effect: 8, start_game: 100 } },
    },
  ],
};

/** A study folder: runs/ with MEASURED and, beside it, whatif.json (unless `whatif` is null). */
async function study(whatif: WhatifPredictionsFile | string | null = PREDICTIONS, measured = MEASURED): Promise<string> {
  const dir = await tempDir("flaplab-whatif-study-");
  for (const [deployment, seeds] of Object.entries(measured)) {
    for (const [seed, runs] of Object.entries(seeds)) {
      for (const [i, [audio, effect, start]] of runs.entries()) {
        await writeRun(join(dir, "runs"), { deployment, seed, run: i + 1, rows: game(audio, effect, start) });
      }
    }
  }
  if (typeof whatif === "string") await writeFile(join(dir, WHATIF_FILE), whatif);
  else if (whatif !== null) await writePredictionsFile(join(dir, WHATIF_FILE), whatif);
  return dir;
}

/** The Markdown table row that starts with these cells. */
function mdRow(md: string, ...cells: string[]): string {
  const start = `| ${cells.join(" | ")} |`;
  const line = md.split("\n").find((l) => l.startsWith(start));
  if (line === undefined) throw new Error(`no row starting ${start}`);
  return line;
}

async function cli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runReportCli(argv, { cwd: process.cwd(), out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("the report's What-if section", () => {
  it("sets each placement's predicted penalty and medians beside what the study measured", async () => {
    const dir = await study();
    const out = await tempDir();
    // As pnpm study writes its report: the runs/ folder is the input; whatif.json is beside it.
    const { report } = await generateReport({ inputs: [join(dir, "runs")], outDir: out });
    const section = whatifSection(report)!;
    expect(section.path).toBe(join(dir, WHATIF_FILE));

    const penalty = (deployment: string, metric: string) => section.penalties.find((p) => p.deployment === deployment && p.metric === metric)!;
    // (6.5 − 3.2 + 5 − 2.9) / 2 and ((6 − 3) + (6 − 3)) / 2.
    expect(penalty("microservices", "input_to_audio").predictedMs).toBeCloseTo(2.7, 9);
    expect(penalty("microservices", "input_to_audio").measuredMs).toBeCloseTo(3, 9);
    expect(penalty("microservices", "input_to_effect").predictedMs).toBeCloseTo(1, 9);
    expect(penalty("microservices", "input_to_effect").measuredMs).toBeCloseTo(1, 9);
    expect(penalty("microservices", "start_game").predictedMs).toBeCloseTo(54.5, 9);
    expect(penalty("microservices", "start_game").measuredMs).toBeCloseTo(50, 9);
    expect(penalty("microservices", "start_game").seeds).toEqual(["easy", "hard"]);
    expect(penalty("whatif-new-1", "start_game")).toMatchObject({ run: false, measuredMs: null });
    expect(penalty("whatif-new-1", "start_game").predictedMs).toBeCloseTo((300 - 24 + 310 - 45) / 2, 9);
    // No seed it shares with the monolith's predictions: no penalty either way.
    expect(penalty("whatif-lonely", "input_to_audio")).toMatchObject({ seeds: [], predictedMs: null, measuredMs: null });

    const row = (deployment: string, seed: string, metric: string) => section.medians.find((m) => m.deployment === deployment && m.seed === seed && m.metric === metric)!;
    // The two monolith runs sound after 2 and 4 ms: the pooled median is 3, not either run's.
    expect(row("monolith", "easy", "input_to_audio")).toMatchObject({ predictedMs: 3.2, measuredMs: 3, withinGoal: true });
    expect(row("microservices", "easy", "start_game")).toMatchObject({ predictedMs: 90, measuredMs: 75, errorMs: 15, errorShare: 0.2, withinGoal: false });
    // 5 ms over 40: more than both 10 % (4 ms) and 3 ms.
    expect(row("monolith", "hard", "start_game")).toMatchObject({ errorMs: 5, withinGoal: false });
    // 0.5 ms over 6 is 8 %; 0.1 ms over 1 is 10 % but within 3 ms.
    expect(row("microservices", "easy", "input_to_audio").withinGoal).toBe(true);
    expect(row("monolith", "easy", "input_to_effect").withinGoal).toBe(true);
    expect(row("whatif-new-1", "hard", "input_to_audio")).toMatchObject({ run: false, measuredMs: null, errorMs: null, withinGoal: null });
    expect(section.medians).toHaveLength(3 * (2 + 2 + 2 + 1));

    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).toContain("## What-if");
    expect(md).toContain("The model was fitted on monolith, microservices of the study results/study-a; whatif-new-1, whatif-lonely are in no topology of the repository.");
    expect(md).toContain("10 of 12 predicted medians of placements run in this study are within the goal, |error| ≤ max(10 % of measured, 3 ms).");
    expect(mdRow(md, "whatif-new-1", "generated", "no", "no")).toContain("engine+music @eu-west-1a");
    expect(mdRow(md, "microservices", "input → audio", "easy, hard")).toBe("| microservices | input → audio | easy, hard | +2.70 | +3.00 |");
    expect(mdRow(md, "microservices", "start game", "easy, hard")).toBe("| microservices | start game | easy, hard | +54.5 | +50.0 |");
    expect(mdRow(md, "monolith", "start game", "easy, hard")).toBe("| monolith | start game | easy, hard | (baseline) | (baseline) |");
    expect(mdRow(md, "whatif-new-1", "input → audio", "easy, hard")).toBe("| whatif-new-1 | input → audio | easy, hard | +48.0 | not run |");
    expect(mdRow(md, "whatif-lonely", "input → audio")).toBe("| whatif-lonely | input → audio | – | – | not run |");
    expect(mdRow(md, "microservices", "easy", "start game")).toBe("| microservices | easy | start game | 90.0 | 75.0 | +15.0 | +20.0 % | no |");
    expect(mdRow(md, "monolith", "hard", "input → audio")).toBe("| monolith | hard | input → audio | 2.90 | 3.00 | -0.100 | -3.3 % | yes |");
    expect(mdRow(md, "whatif-new-1", "easy", "start game")).toBe("| whatif-new-1 | easy | start game | 300 | not run | – | – | – |");

    const html = await readFile(join(out, "report.html"), "utf8");
    expect(html).toContain('<li><a href="#whatif">What-if</a></li>');
    expect(html).toContain('<section id="whatif"><h2>What-if</h2>');
    expect(html).toContain("<td>+54.5</td><td>+50.0</td>");
    expect(html).toContain("are in no topology of the repository.");

    const json = JSON.parse(await readFile(join(out, "metrics.json"), "utf8")) as { whatif: { goal: { share: number; ms: number }; penalties: unknown[]; medians: unknown[] } };
    expect(json.whatif.goal).toEqual({ share: 0.1, ms: 3 });
    expect(json.whatif.penalties).toHaveLength(12);
    expect(json.whatif.medians).toHaveLength(21);
  });

  it("shows no measured penalty where the study did not run the monolith", async () => {
    const dir = await study(PREDICTIONS, { microservices: MEASURED["microservices"]! });
    const out = await tempDir();
    await generateReport({ inputs: [dir], outDir: out });
    const md = await readFile(join(out, "report.md"), "utf8");
    expect(mdRow(md, "microservices", "input → audio", "easy, hard")).toBe("| microservices | input → audio | easy, hard | +2.70 | – |");
    expect(mdRow(md, "monolith", "easy", "input → audio")).toBe("| monolith | easy | input → audio | 3.20 | not run | – | – | – |");
  });

  it("sets the predicted penalty over the seeds the study ran, beside the measured one", async () => {
    const dir = await study(PREDICTIONS, { monolith: MEASURED["monolith"]!, microservices: { easy: MEASURED["microservices"]!["easy"]! } });
    const out = await tempDir();
    const { report } = await generateReport({ inputs: [join(dir, "runs")], outDir: out });
    const penalty = whatifSection(report)!.penalties.find((p) => p.deployment === "microservices" && p.metric === "input_to_audio")!;
    // The easy seed alone: 6.5 − 3.2 predicted, not the mean over both seeds' predictions.
    expect(penalty.seeds).toEqual(["easy"]);
    expect(penalty.predictedMs).toBeCloseTo(3.3, 9);
    expect(penalty.measuredSeeds).toEqual(["easy"]);
  });

  it("reads the file --whatif names", async () => {
    const dir = await study(null);
    const file = join(await tempDir(), "predictions.json");
    await writePredictionsFile(file, PREDICTIONS);
    const out = await tempDir();
    const r = await cli([dir, "--out", out, "--whatif", file]);
    expect(r.code).toBe(0);
    expect(await readFile(join(out, "report.md"), "utf8")).toContain(`**What-if placements (${file})**`);
    expect((await cli([dir, "--out", out, "--whatif", join(dir, "missing.json")])).err[0]).toBe(`report: --whatif: no such file: ${join(dir, "missing.json")}`);
  });

  it("has no What-if section without whatif.json", async () => {
    const dir = await study(null);
    const out = await tempDir();
    const { report } = await generateReport({ inputs: [dir], outDir: out });
    expect(whatifSection(report)).toBeNull();
    expect(await readFile(join(out, "report.md"), "utf8")).not.toContain("What-if");
    expect(await readFile(join(out, "report.html"), "utf8")).not.toContain("What-if");
  });

  it("turns a broken whatif.json into a problem line naming the file and the field, and renders the rest", async () => {
    const bad = structuredClone(PREDICTIONS) as unknown as { placements: { predicted: Record<string, Record<string, unknown>> }[] };
    bad.placements[1]!.predicted["easy"]!["start_game"] = "fast";
    const dir = await study(JSON.stringify(bad));
    const out = await tempDir();
    const r = await cli([join(dir, "runs"), "--out", out]);
    expect(r.code).toBe(0);
    const path = join(dir, WHATIF_FILE);
    const line = `skipped ${path}: ${path}: placements[1].predicted.easy.start_game: Invalid input: expected number, received string; the What-if section is left out`;
    expect(r.err).toContain(line);
    for (const f of ["report.html", "report.md", "metrics.csv", "metrics.json"]) expect(existsSync(join(out, f))).toBe(true);
    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).not.toContain("## What-if");
    expect(md).toContain("## Unreadable runs and files");
    expect(md).toContain("placements[1].predicted.easy.start_game");
    expect(md).toContain("## monolith × seed easy");

    const notJson = await study("{ broken");
    const r2 = await cli([notJson, "--out", await tempDir()]);
    expect(r2.code).toBe(0);
    expect(r2.err.join("\n")).toContain(`${join(notJson, WHATIF_FILE)}: not JSON: `);
  });
});
