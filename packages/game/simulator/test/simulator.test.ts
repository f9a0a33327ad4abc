import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_VIEWPORT } from "@flaplab/physics";
import { parseTrace } from "@flaplab/input-traces";
import { afterAll, describe, expect, it } from "vitest";
import { formatResult, runCli, simulate, simulateCourse, simulateTrace } from "../src/index.js";

const EASY = 6977347407732442987n;
const HARD = 8525333463046388971n;
const EASY_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];
const VECTORS = fileURLToPath(new URL("../../../../test-data/flappygo/", import.meta.url));
const EASY_TRACE = join(VECTORS, "traces", `${EASY}.csv`);
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

const tmp = mkdtempSync(join(tmpdir(), "flaplab-simulator-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tmpFile(name: string, text: string): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

describe("simulate", () => {
  it("the easy seed's flap ticks give score 7 at tick 402", () => {
    expect(simulate({ seed: EASY, flapTicks: EASY_TICKS })).toEqual({
      seed: EASY,
      score: 7,
      ticks: 402,
      died: true,
      courseEnd: false,
    });
  });

  it("games without flaps end at tick 52 (easy) and 34 (hard) with score 0", () => {
    expect(simulate({ seed: EASY, flapTicks: [] })).toMatchObject({ score: 0, ticks: 52 });
    expect(simulate({ seed: HARD, flapTicks: [] })).toMatchObject({ score: 0, ticks: 34 });
  });

  it("takes flap ticks in any order; repeats are one flap", () => {
    const shuffled = [...EASY_TICKS].reverse().flatMap((k) => [k, k]);
    expect(simulate({ seed: EASY, flapTicks: shuffled })).toEqual(simulate({ seed: EASY, flapTicks: EASY_TICKS }));
    // A flap after the game is over changes nothing.
    expect(simulate({ seed: EASY, flapTicks: [...EASY_TICKS, 403, 5000] }).ticks).toBe(402);
  });

  it("rejects flap ticks that are not ticks", () => {
    expect(() => simulate({ seed: EASY, flapTicks: [0] })).toThrow(RangeError);
    expect(() => simulate({ seed: EASY, flapTicks: [1.5] })).toThrow(RangeError);
  });

  it("the generated world plays like FlappyGo's own", () => {
    const go = JSON.parse(readFileSync(join(VECTORS, "worlds", `${EASY}.json`), "utf8")) as {
      PipeSpacing: number;
      PipeSpecs: { GapStart: number; GapHeight: number }[];
    };
    const course = {
      pipeSpacing: go.PipeSpacing,
      pipes: go.PipeSpecs.map((p) => ({ gapStart: p.GapStart, gapHeight: p.GapHeight })),
      viewport: DEFAULT_VIEWPORT,
    };
    for (const ticks of [[], EASY_TICKS, EASY_TICKS.slice(0, 5)]) {
      const { seed: _seed, ...outcome } = simulate({ seed: EASY, flapTicks: ticks });
      expect(simulateCourse(course, ticks)).toEqual(outcome);
    }
  });

  it("formats one JSON line with the seed as a string", () => {
    const line = formatResult({ seed: EASY, score: 7, ticks: 402, died: true, courseEnd: false });
    expect(line).toBe('{"seed":"6977347407732442987","score":7,"ticks":402}');
  });
});

describe("simulateTrace", () => {
  it("uses the trace's seed, or the one given", () => {
    const csv = "code,time\n57,0\n57,1000\n57,2000\n";
    const named = parseTrace(csv, { fileName: `${HARD}.csv` });
    expect(simulateTrace(named).seed).toBe(HARD);
    expect(simulateTrace(named, { seed: EASY }).seed).toBe(EASY);
    expect(() => simulateTrace(parseTrace(csv))).toThrow(/no seed/);
  });
});

describe("runCli", () => {
  async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { stdout: (l) => out.push(l), stderr: (l) => err.push(l), cwd: tmp });
    return { code, out, err };
  }

  it("resolves a relative trace path against the given directory", async () => {
    tmpFile(`${EASY}.csv`, `code,time\n57,0\n${EASY_TICKS.map((k) => `57,${(k - 1) * 33 + 5}`).join("\n")}\n57,99999\n`);
    const r = await run(["--trace", `${EASY}.csv`]);
    expect(r).toEqual({ code: 0, out: ['{"seed":"6977347407732442987","score":7,"ticks":402}'], err: [] });
  });

  it.each([
    [[], /missing --trace/],
    [["--trace"], /--trace/],
    [["--trace", "a.csv", "--frobnicate"], /frobnicate/],
    [["--trace", "a.csv", "extra"], /positional/i],
    [["--trace", "a.csv", "--seed", "12x"], /--seed must be a decimal int64, got "12x"/],
    [["--trace", "a.csv", "--seed", "9223372036854775808"], /--seed must be a decimal int64/],
    [["--trace", "does-not-exist.csv"], /cannot read trace file .*does-not-exist\.csv \(ENOENT\)/],
  ])("exits 2 for %j", async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err[0]).toMatch(message);
  });

  it("exits 2 for a trace without a seed unless --seed is given", async () => {
    tmpFile("unnamed.csv", "code,time\n57,0\n");
    const r = await run(["--trace", "unnamed.csv"]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/no seed.*--seed/);
    const ok = await run(["--trace", "unnamed.csv", "--seed", String(HARD)]);
    expect(ok.out).toEqual(['{"seed":"8525333463046388971","score":0,"ticks":34}']);
  });

  it("exits 2 for a trace whose viewport cannot be played", async () => {
    const path = tmpFile("tiny.json", JSON.stringify({ format: "flaplab-trace/1", seed: "1", viewport: { width: 2, height: 2 }, inputs: [] }));
    const r = await run(["--trace", path]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/too small/);
  });
});

/** Runs a command; resolves with its exit code and output (never rejects on a non-zero exit). */
function spawn(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(cmd, args, { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
      done({ code, stdout, stderr });
    });
  });
}

const cli = (args: string[]) => spawn(process.execPath, ["--import", "tsx", "bin/simulate.ts", ...args], PACKAGE_DIR);

describe("the simulate CLI", () => {
  it("prints the easy trace's result", async () => {
    const r = await cli(["--trace", EASY_TRACE]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"seed":"6977347407732442987","score":7,"ticks":402}\n');
  });

  it("exits 2 with a clear message for a broken trace", async () => {
    const path = tmpFile(`${EASY}-broken.csv`, "code,time\n57,100\n57,90\n");
    const r = await cli(["--trace", path, "--seed", String(EASY)]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`simulate: ${path}: line 3: times must not decrease: 90 after 100`);
  });

  it(
    "runs as `pnpm simulate` from the repository root with a relative path",
    async () => {
      const { INIT_CWD: _ignored, ...env } = process.env;
      const r = await spawn("pnpm", ["--silent", "simulate", "--trace", "test-data/flappygo/traces/6977347407732442987.csv"], REPO_ROOT, env);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe('{"seed":"6977347407732442987","score":7,"ticks":402}');
    },
    60_000,
  );
});
