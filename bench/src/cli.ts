// pnpm bench [--quick] [--only calls,idle,load,engine,frames,browser,overload,ticks]
// Prints one Markdown table per section under a machine header line, and writes
// bench/results/latest.json (numbers) and bench/results/latest.md (the tables). With --only, the
// sections not run keep their previous results there (each says when it was measured). --quick
// writes to bench/results/quick/ instead (not kept in git).
// pnpm bench --soak [--soak-games 2000] [--soak-minutes 10] [--soak-shards <one per core>]: the
// soak alone (not in CI), written to bench/results/soak.json and soak.md.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { describeMachine, machineLine } from "./machine.js";
import {
  mergeResults,
  readPreviousResults,
  renderGoals,
  renderResults,
  renderSection,
  RESULTS_FORMAT,
  storeSection,
  type StoredSection,
} from "./results.js";
import type { RunOptions, SectionResult } from "./section.js";
import { DEFAULT_SOAK, runSoak } from "./soak.js";
import { renderTable } from "./table.js";

export const SECTION_IDS = ["calls", "idle", "load", "engine", "frames", "browser", "overload", "ticks"] as const;
export type SectionId = (typeof SECTION_IDS)[number];

const RUNNERS: Record<SectionId, () => Promise<(opts: RunOptions) => Promise<SectionResult>>> = {
  calls: async () => (await import("./calls.js")).runCalls,
  idle: async () => (await import("./idle-hop.js")).runIdleHop,
  load: async () => (await import("./load.js")).runLoad,
  engine: async () => (await import("./engine.js")).runEngine,
  frames: async () => (await import("./frames.js")).runFrames,
  browser: async () => (await import("./browser.js")).runBrowser,
  overload: async () => (await import("./overload.js")).runOverload,
  ticks: async () => (await import("./tick-calls.js")).runTickCalls,
};

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== "--"),
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      out: { type: "string" },
      soak: { type: "boolean", default: false },
      "soak-games": { type: "string", default: String(DEFAULT_SOAK.games) },
      "soak-minutes": { type: "string", default: String(DEFAULT_SOAK.minutes) },
      "soak-shards": { type: "string", default: String(DEFAULT_SOAK.shards) },
    },
  });
  if (values.soak) return soak(values["soak-games"], values["soak-minutes"], values["soak-shards"], values.out);
  const only = values.only?.split(",").map((s) => s.trim()) ?? [...SECTION_IDS];
  for (const id of only) {
    if (!(SECTION_IDS as readonly string[]).includes(id)) {
      process.stderr.write(`unknown section ${id} (sections: ${SECTION_IDS.join(", ")})\n`);
      return 2;
    }
  }
  const quick = values.quick;
  // A quick run's tiny counts never replace a full run's results.
  const outDir = values.out ? resolve(process.env["INIT_CWD"] ?? process.cwd(), values.out) : resolve(import.meta.dirname, quick ? "../results/quick" : "../results");
  const machine = describeMachine();
  const startedAt = new Date();
  const t0 = performance.now();
  const header = `${machineLine(machine)}; ${quick ? "quick run (tiny counts, no goals judged)" : "full run"}; ${startedAt.toISOString()}`;
  process.stdout.write(`${header}\n\n`);
  const workDir = await mkdtemp(join(tmpdir(), "flaplab-bench-"));
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const sections: Record<string, StoredSection> = {};
  const failures: { id: string; error: string }[] = [];
  try {
    for (const id of SECTION_IDS) {
      if (!only.includes(id)) continue;
      log(`${id}…`);
      try {
        const run = await RUNNERS[id]();
        const loadBefore = loadavg()[0]!;
        const result = await run({ quick, workDir, log });
        const load: [number, number] = [Math.round(loadBefore * 100) / 100, Math.round(loadavg()[0]! * 100) / 100];
        sections[id] = storeSection(result, startedAt.toISOString(), load);
        process.stdout.write(`${renderSection(result)}\n\n`);
        log(`${id} done in ${result.seconds.toFixed(1)} s`);
      } catch (err) {
        const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        failures.push({ id, error });
        process.stdout.write(`## ${id}: FAILED\n\n${error.split("\n")[0]}\n\n`);
        log(`${id} failed: ${error}`);
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0) / 1000;
  const goals = Object.values(sections).flatMap((sec) => sec.goals);
  const goalTable = renderGoals(goals, quick);
  process.stdout.write(`## Goals\n\n${goalTable}\n\nTotal time: ${seconds.toFixed(0)} s.\n`);
  await mkdir(outDir, { recursive: true });
  const partial = only.length < SECTION_IDS.length;
  const previous = partial ? await readPreviousResults(outDir, quick) : undefined;
  const results = mergeResults(
    SECTION_IDS,
    { format: RESULTS_FORMAT, quick, startedAt: startedAt.toISOString(), seconds, machine, sections, failures },
    previous,
  );
  const kept = Object.keys(results.sections).filter((id) => !sections[id]);
  await writeFile(join(outDir, "latest.json"), `${JSON.stringify(results, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2)}\n`);
  await writeFile(join(outDir, "latest.md"), renderResults(results, header));
  if (kept.length > 0) log(`kept the previous results of ${kept.join(", ")} (not run this time)`);
  log(`wrote ${join(outDir, "latest.json")} and latest.md in ${seconds.toFixed(0)} s`);
  return failures.length > 0 ? 1 : 0;
}

async function soak(gamesText: string, minutesText: string, shardsText: string, out: string | undefined): Promise<number> {
  const games = Number(gamesText);
  const minutes = Number(minutesText);
  const shards = Number(shardsText);
  if (!Number.isInteger(games) || games < 1 || games > 20_000) {
    process.stderr.write(`--soak-games must be a whole number from 1 to 20000, got ${gamesText}\n`);
    return 2;
  }
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 600) {
    process.stderr.write(`--soak-minutes must be a whole number from 1 to 600, got ${minutesText}\n`);
    return 2;
  }
  if (!Number.isInteger(shards) || shards < 0 || shards > 64) {
    process.stderr.write(`--soak-shards must be a whole number from 0 to 64, got ${shardsText}\n`);
    return 2;
  }
  const outDir = out ? resolve(process.env["INIT_CWD"] ?? process.cwd(), out) : resolve(import.meta.dirname, "../results");
  const machine = describeMachine();
  const startedAt = new Date();
  const header = `${machineLine(machine)}; soak; ${startedAt.toISOString()}`;
  process.stdout.write(`${header}\n\n`);
  const workDir = await mkdtemp(join(tmpdir(), "flaplab-soak-"));
  let result: Awaited<ReturnType<typeof runSoak>>;
  try {
    result = await runSoak({ games, shards, minutes, intervalMs: DEFAULT_SOAK.intervalMs, warmupIntervals: DEFAULT_SOAK.warmupIntervals, workDir, log: (l) => process.stderr.write(`[bench] ${l}\n`) });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const checks = renderTable({
    headers: ["Check", "Measured", "Status"],
    align: ["l", "l", "l"],
    rows: result.checks.map((c) => [c.check, c.measured, c.met ? "met" : "missed"]),
  });
  const md = [
    `# Soak: ${games.toLocaleString("en-US")} games for ${minutes} min`,
    "",
    header,
    "",
    renderTable(result.table),
    "",
    checks,
    "",
    `- ${shards > 0 ? `The engine on ${shards} shard process${shards === 1 ? "" : "es"} behind the one plain WebSocket port (as \`FLAPLAB_ENGINE_SHARDS=${shards}\` runs it: the port's process makes the games, accepts, checks each stream ticket and hands the game and its socket to the shard with the fewest games, where its game session handler, TickScheduler and GameTable play it)` : "The engine's game session handler, TickScheduler and GameTable in one process behind the plain WebSocket link"}; the clients in another process, keeping the games going: each game flaps on the planned schedule until a tick drawn from 200–1200, then stops, so the bird falls and the game ends; a new game takes its place once the engine has sent the summary (recorded) and closed the session normally.`,
    "- Lost: a game that ended any other way (closed with another code, no summary, or not recorded). Not started: new games the server could not make (a failed POST /games, retried after 1 s), which are no games lost. Late ticks: ticks more than 2 ms after their deadline. RSS, heap and FDs: the engine's processes (the port's and the shards', summed) at the end of each interval; p99 lateness and GC max: the worst of them; CPU: theirs summed, as a share of one core.",
    "",
  ].join("\n");
  process.stdout.write(`${md}\n`);
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, "soak.md"), md);
  await writeFile(join(outDir, "soak.json"), `${JSON.stringify({ format: "flaplab-soak/1", startedAt: startedAt.toISOString(), machine, ...result }, null, 2)}\n`);
  process.stderr.write(`[bench] wrote ${join(outDir, "soak.md")} and soak.json\n`);
  return result.checks.every((c) => c.met) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
