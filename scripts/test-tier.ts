// Runs one test tier and prints what it took and how many test cases it ran.
//
//   pnpm test        → tsx scripts/test-tier.ts fast
//   pnpm test:full   → tsx scripts/test-tier.ts full
//
// fast: lint, type-check, every package's `test` script (turbo, as many packages side by side as
//       there are cores), then every package's `test:serial` script (turbo, one package at a time:
//       suites that start servers, browsers or timed loads and need the cores to themselves).
// full: all of fast, then every package's `test:slow` script, one package at a time: whole
//       multi-process deployments, Redis, toxiproxy, builds, the study, soaks.
//
// A package joins a step by having that script; nothing here names packages. The last line is
// `N passed, N failed` over every vitest case the tier ran.
import { spawn } from "node:child_process";
import { resolve } from "node:path";

type Tier = "fast" | "full";

interface Step {
  name: string;
  command: string[];
}

interface StepResult {
  name: string;
  seconds: number;
  ok: boolean;
  counts: Counts;
}

interface Counts {
  files: number;
  passed: number;
  failed: number;
  skipped: number;
}

const ROOT = resolve(import.meta.dirname, "..");

const turbo = (task: string, ...flags: string[]): string[] => [
  "turbo",
  "run",
  task,
  "--continue",
  "--output-logs=full",
  ...flags,
];

function stepsOf(tier: Tier): Step[] {
  const fast: Step[] = [
    { name: "lint", command: ["biome", "lint", "."] },
    { name: "typecheck", command: ["pnpm", "run", "--silent", "typecheck"] },
    { name: "test", command: turbo("test", "--log-order=grouped", "--concurrency=100%") },
    { name: "test:serial", command: turbo("test:serial", "--concurrency=1") },
  ];
  if (tier === "fast") return fast;
  return [...fast, { name: "test:slow", command: turbo("test:slow", "--concurrency=1") }];
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** Adds what one line of vitest's summary says (`Tests  3 failed | 20 passed (23)`, `Test Files  4 passed (4)`). */
export function countLine(line: string, into: Counts): void {
  const plain = line.replace(ANSI, "");
  const tests = /\bTests\s+(.+)\(\d+\)\s*$/.exec(plain);
  if (tests) {
    for (const [, n, what] of tests[1]!.matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
      if (what === "passed") into.passed += Number(n);
      else if (what === "failed") into.failed += Number(n);
      else into.skipped += Number(n);
    }
    return;
  }
  const files = /\bTest Files\s+.*\((\d+)\)\s*$/.exec(plain);
  if (files) into.files += Number(files[1]);
}

const zero = (): Counts => ({ files: 0, passed: 0, failed: 0, skipped: 0 });

function run(step: Step): Promise<StepResult> {
  const started = performance.now();
  const counts = zero();
  return new Promise((done) => {
    const child = spawn("pnpm", ["exec", ...step.command], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let pending = "";
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) countLine(line, counts);
    });
    child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    child.on("close", (code) => {
      if (pending) countLine(pending, counts);
      done({ name: step.name, seconds: (performance.now() - started) / 1000, ok: code === 0, counts });
    });
  });
}

export function duration(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

async function main(): Promise<number> {
  const tier = process.argv[2];
  if (tier !== "fast" && tier !== "full") {
    console.error(`usage: tsx scripts/test-tier.ts fast|full (got ${tier ?? "nothing"})`);
    return 2;
  }
  const results: StepResult[] = [];
  for (const step of stepsOf(tier)) {
    console.log(`\n── tier ${tier}: ${step.name} (${step.command.join(" ")})`);
    const result = await run(step);
    results.push(result);
    console.log(`── tier ${tier}: ${step.name} ${result.ok ? "passed" : "FAILED"} in ${duration(result.seconds)}`);
    // Lint and type errors stop the tier: the tests would only repeat them.
    if (!result.ok && (step.name === "lint" || step.name === "typecheck")) break;
  }
  const total = results.reduce((a, r) => a + r.seconds, 0);
  const sum = results.reduce(
    (a, r) => ({
      files: a.files + r.counts.files,
      passed: a.passed + r.counts.passed,
      failed: a.failed + r.counts.failed,
      skipped: a.skipped + r.counts.skipped,
    }),
    zero(),
  );
  console.log(`\n── tier ${tier} ──`);
  console.log("step          time         files  passed  failed  skipped  result");
  for (const r of results) {
    const c = r.counts;
    console.log(
      `${r.name.padEnd(12)}  ${duration(r.seconds).padEnd(11)}  ${String(c.files).padStart(5)}  ${String(c.passed).padStart(6)}  ${String(c.failed).padStart(6)}  ${String(c.skipped).padStart(7)}  ${r.ok ? "ok" : "FAILED"}`,
    );
  }
  const tests = results.filter((r) => r.name.startsWith("test")).reduce((a, r) => a + r.seconds, 0);
  console.log(`tier ${tier}: ${duration(total)} in all, ${duration(tests)} of tests, ${sum.files} test files; ended at ${new Date().toISOString().slice(11, 19)} UTC`);
  if (tier === "full") {
    const cases = (names: string[]) =>
      results.filter((r) => names.includes(r.name)).reduce((a, r) => a + r.counts.passed + r.counts.failed + r.counts.skipped, 0);
    console.log(`test cases: ${cases(["test", "test:serial"])} in the fast tier (pnpm test), ${cases(["test:slow"])} in the slow tier`);
  }
  const ok = results.length === stepsOf(tier).length && results.every((r) => r.ok);
  // The closing line CI reads: every vitest case of the tier.
  if (!ok) console.log(`tier ${tier} FAILED: ${results.filter((r) => !r.ok).map((r) => r.name).join(", ") || "stopped early"}`);
  console.log(`${sum.passed} passed, ${sum.failed} failed${sum.skipped ? `, ${sum.skipped} skipped` : ""}`);
  return ok ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  process.exitCode = await main();
}
