import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateReport } from "../../src/report/cli.js";
import { loadRows, rowsByDeployment, saturationSentence } from "../../src/report/load-section.js";
import { pairedPenalties } from "../../src/report/paired.js";
import { removeTempDirs, rttRows, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";

afterAll(removeTempDirs);

const SEED = "6977347407732442987";

/** A game with 15 inputs whose sounds come `audioMs` after them; every tenth frame gap is `slowGapMs` (else 33 ms). */
function game(audioMs: number, slowGapMs = 33): Row[] {
  const ticks = tickFrames(500, Array.from({ length: 400 }, (_, i) => (i % 10 === 9 ? slowGapMs : 33)));
  const rows: Row[] = [...rttRows(), ...ticks];
  for (let j = 1; j <= 15; j++) {
    const sent = ticks[20 * j]!.time + 5;
    rows.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    rows.push({ type: "audio", direction: "recv", time: sent + audioMs, seq: j, tick: 20 * j, sound: "flap", bytes: 30 });
  }
  return rows;
}

const HELD = "verdict: the load generator held this level (bot lateness p99 ≤ 5 ms, every worker's CPU ≤ 85 %): the latencies are the deployment's";
const NOT_HELD = "verdict: the load generator could not hold this level (bot lateness p99 7.10 ms > 5 ms): these latencies are partly the client's, not the server's";

/**
 * Writes <load>/<folder>/level.json, the bots' summary.json and games.csv as a study with --load
 * does: `completed` and `failed` games during the measured window (10 s to 60 s), and before it, in
 * the ramp, one game that failed at its login and one unfinished at the drain.
 */
async function writeLevel(load: string, folder: string, level: number, bots: { completed: number; failed?: number; verdict: string }): Promise<void> {
  const dir = join(load, folder);
  await mkdir(dir, { recursive: true });
  const ms = (p50: number, p99: number) => ({ samples: 100, p50, p90: p99, p99, p999: p99, max: p99, mean: p50 });
  const failed = bots.failed ?? 0;
  const games = [
    "worker,bot,game_id,seed,intended_start_ms,start_ms,end_ms,outcome,reason,score,ticks,simulator_score,presses,reconnections",
    "0,0,g-ramp,1,0,0,500,failed,login failed (busy),,,,0,0",
    ...Array.from({ length: bots.completed }, (_, i) => `0,${i},g-${i},1,8000,8000,40000,completed,,19,1033,19,173,0`),
    ...Array.from({ length: failed }, (_, i) => `0,${i},f-${i},1,8000,8000,30000,failed,score differs from the simulator,5,300,6,40,0`),
    "0,1,g-drain,1,80000,80000,100000,unfinished,unfinished at drain,3,300,,20,0",
  ];
  await writeFile(join(dir, "games.csv"), `${games.join("\n")}\n`);
  await writeFile(
    join(dir, "summary.json"),
    JSON.stringify({
      games: { started: bots.completed + failed + 2, completed: bots.completed, failed: failed + 1, unfinished: 1, lost: 0 },
      failures: { "login failed (busy)": 1, ...(failed > 0 ? { "score differs from the simulator": failed } : {}), "unfinished at drain": 1 },
      latency: { "start-game": ms(40, 90), "input-effect": ms(20, 41), "input-audio": ms(8, 30), "frame-interarrival": ms(33, 40), "bot-lateness": ms(0.2, 0.5) },
      workerCpuPct: [40],
      verdict: bots.verdict,
    }),
  );
  await writeFile(
    join(dir, "level.json"),
    JSON.stringify({
      format: "flaplab-load-level/1",
      deployment: folder,
      runFolders: [folder],
      level,
      workers: 1,
      loadDurationMs: 90_000,
      loadStartedAt: 1_000,
      loadEndsAt: 91_000,
      windowStartedAt: 11_000,
      windowEndedAt: 61_000,
      covered: true,
      minInFlight: level,
      cpu: [{ group: "engine", components: ["engine"], cpuUs: level * 1_000_000, pct: level * 2 }],
    }),
  );
}

/**
 * monolith and microservices at 0, 10 and 20 players, two runs each. microservices is 3 ms slower to
 * sound at every level. At 20 both deliver slow frames, but the bots could not hold 20 on the monolith.
 */
async function study(): Promise<string> {
  const root = await tempDir();
  const runs = join(root, "runs");
  const load = join(root, "load");
  for (const [deployment, extra] of [["monolith", 0], ["microservices", 3]] as const) {
    for (const level of [0, 10, 20]) {
      const name = level === 0 ? deployment : `${deployment}@${level}`;
      for (const run of [1, 2]) await writeRun(runs, { deployment: name, seed: SEED, run, rows: game(10 + level / 10 + run + extra, level === 20 ? 80 : 33) });
    }
  }
  await writeLevel(load, "monolith@10", 10, { completed: 12, verdict: HELD });
  await writeLevel(load, "monolith@20", 20, { completed: 20, verdict: NOT_HELD });
  await writeLevel(load, "microservices@10", 10, { completed: 12, verdict: HELD });
  await writeLevel(load, "microservices@20", 20, { completed: 18, failed: 2, verdict: HELD });
  return root;
}

describe("the report's Load section", () => {
  it("has one row per deployment and level, the penalty at the same level, the bots' figures and the CPU", async () => {
    const root = await study();
    const { report, files } = await generateReport({ inputs: [root], outDir: join(root, "report") });
    // The bots' summaries are read as load levels, not mistaken for runs.
    expect(report.problems).toEqual([]);
    const rows = loadRows(report);
    expect(rows.map((r) => `${r.deployment}@${r.level}`)).toEqual(["monolith@0", "monolith@10", "monolith@20", "microservices@0", "microservices@10", "microservices@20"]);
    const micro10 = rows.find((r) => r.deployment === "microservices" && r.level === 10)!;
    // Paired with monolith@10, run by run: 3 ms every time.
    expect(micro10.penaltyAudio).toMatchObject({ pairs: 2, lowMs: expect.closeTo(3, 2), highMs: expect.closeTo(3, 2) });
    expect(micro10.penaltyAudio!.meanMs).toBeCloseTo(3, 2);
    expect(rows.find((r) => r.deployment === "monolith" && r.level === 10)!.penaltyAudio).toBeNull();

    const md = await readFile(files.markdown, "utf8");
    const section = md.slice(md.indexOf("## Load"), md.indexOf("\n## ", md.indexOf("## Load") + 5));
    expect(section).toMatch(/^\| microservices \| 10 \| 2 \/ 2 \| 15\.0 \/ 16\.0 \|[^\n]*\| 3\.00 \[3\.00 … 3\.00\] \|/m);
    expect(section).toMatch(/^\| monolith \| 10 \| 2 \/ 2 \|[^\n]*\| \(baseline\) \|/m);
    // Games lost at 20 on microservices: the two bot games that failed during the runs (not the
    // ramp's failed login, not the game the drain cut).
    expect(section).toMatch(/^\| microservices \| 20 \| 2 \/ 2 \|[^\n]*\| 2 \|$/m);
    expect(section).toMatch(/^\| microservices \| 10 \| 2 \/ 2 \|[^\n]*\| 0 \|$/m);
    expect(section).toMatch(/^\| microservices \| 20 \| 18 \/ 22 \| 18 \/ 2 \| 3 \/ 0 \| 1 \| 40\.0 \/ 90\.0 \| 41\.0 \| held \| engine 40 \|$/m);
    expect(section).toMatch(/^\| monolith \| 20 \| 20 \/ 22 \| 20 \/ 0 \| 1 \/ 0 \| 1 \|[^\n]*\| not held by the load generator \(bot lateness p99 7\.10 ms > 5 ms\) \| engine 40 \|$/m);
    expect(section).toMatch(/^\| monolith \| 0 \| – \| – \| – \| – \| – \| – \| – \| – \|$/m);
  });

  it("names each deployment's saturation point, and does not blame the server for a level the bots did not hold", async () => {
    const root = await study();
    const { report } = await generateReport({ inputs: [join(root, "runs")], load: join(root, "load"), outDir: join(root, "report") });
    const sentences = rowsByDeployment(loadRows(report)).map(saturationSentence);
    expect(sentences).toEqual([
      "monolith kept its ticks and lost no game at every level measured, up to 10 players. At 20 players the load generator could not hold the level (bot lateness p99 7.10 ms > 5 ms), so that level says nothing of the server.",
      "microservices saturates at 20 players: frame inter-arrival p99 80.0 ms > 50 ms (1.5 ticks). Games ended off the simulator's score (a press applied a tick late): 2 at 20 players.",
    ]);
    const html = await readFile(join(root, "report", "report.html"), "utf8");
    expect(html).toContain(sentences[1]!.replaceAll(">", "&gt;"));
  });

  it("draws the penalty and the input → audio median against load as inline SVG, one line per deployment", async () => {
    const root = await study();
    const { files } = await generateReport({ inputs: [root], outDir: join(root, "report") });
    const html = await readFile(files.html, "utf8");
    const section = html.slice(html.indexOf('<section id="load">'), html.indexOf("</section>", html.indexOf('<section id="load">')));
    const charts = section.split('<div class="chart"').slice(1);
    expect(charts).toHaveLength(2);
    expect(charts[0]).toContain("penalty on input → audio against load");
    expect(charts[1]).toContain("input → audio median against load");
    // Penalty: microservices alone (the monolith is the baseline); median: both deployments.
    const lines = (svg: string) => (svg.match(/<path[^>]*d="M[^"]*"/g) ?? []).length;
    expect(charts[0]).toContain("<svg");
    expect(lines(charts[0]!)).toBeGreaterThanOrEqual(1);
    expect(lines(charts[1]!)).toBeGreaterThanOrEqual(2);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });

  it("is left out of a study without load levels", async () => {
    const root = await tempDir();
    for (const run of [1, 2]) await writeRun(root, { deployment: "monolith", seed: SEED, run, rows: game(10) });
    const { files, report } = await generateReport({ inputs: [root], outDir: join(root, "report") });
    expect(loadRows(report)).toEqual([]);
    expect(await readFile(files.markdown, "utf8")).not.toContain("## Load");
    expect(await readFile(files.html, "utf8")).not.toContain('id="load"');
  });

  it("refuses a --load folder that does not exist", async () => {
    const root = await tempDir();
    await writeRun(root, { deployment: "monolith", seed: SEED, run: 1, rows: game(10) });
    await expect(generateReport({ inputs: [root], load: join(root, "nowhere"), outDir: join(root, "report") })).rejects.toThrow(/--load: no such folder/);
  });
});

/**
 * A real study, trimmed (no call logs): `pnpm study --load 0,3 --runs 2 --deployments
 * monolith,microservices --trace replay/traces/6977347407732442987.csv` on a busy 2-core machine.
 */
const REAL = join(import.meta.dirname, "fixtures", "load-study");

describe("the Load section of a real study", () => {
  it("reads the study folder's runs and load levels, and pairs microservices@3 with monolith@3", async () => {
    const out = await tempDir();
    const { report, files } = await generateReport({ inputs: [REAL], outDir: out });
    expect(report.problems).toEqual([]);
    expect(report.levels?.map((l) => l.record.deployment).sort()).toEqual(["microservices@3", "monolith@3"]);
    const rows = loadRows(report);
    expect(rows.map((r) => `${r.deployment}@${r.level} ${r.runs.ok}/${r.runs.all}`)).toEqual(["monolith@0 2/2", "monolith@3 2/2", "microservices@0 2/2", "microservices@3 2/2"]);
    // One seed: the penalty pooled over seeds is the penalty table's for that seed.
    const micro3 = rows.find((r) => r.deployment === "microservices" && r.level === 3)!;
    const table = pairedPenalties(report.groups).find((p) => p.deployment === "microservices@3" && p.metric === "input_to_audio")!;
    expect(table.pairs).toBe(2);
    expect(micro3.penaltyAudio).toEqual({ pairs: 2, meanMs: table.meanMs, lowMs: table.lowMs, highMs: table.highMs });
    // The bots: 3 of monolith@3's games ended off the simulator's score (presses applied a tick late), 2 cut by the drain.
    const mono3 = rows.find((r) => r.deployment === "monolith" && r.level === 3)!;
    expect(mono3.bots?.games).toMatchObject({ started: 11, completed: 6, failed: 3, unfinished: 2, lost: 0 });
    // Ended and recorded, a press a tick late: off the simulator's score, not lost.
    expect(mono3).toMatchObject({ botGamesLost: 0, offScore: 3, gamesLost: 0, held: true, covered: true });
    // All three failed while the Chromium runs were played (6 s to 51 s into the load).
    expect(mono3.window).toEqual({ games: 8, completed: 5, failed: 3, failures: { "score differs from the simulator": 3 } });
    expect(micro3).toMatchObject({ botGamesLost: 0, offScore: 0, gamesLost: 0, held: true, covered: true });
    expect(micro3.cpu.map((c) => c.group)).toEqual(["auth", "worldgen", "engine", "initiator", "music", "score"]);

    const md = await readFile(files.markdown, "utf8");
    const section = md.slice(md.indexOf("## Load"), md.indexOf("\n## ", md.indexOf("## Load") + 5));
    expect(section).toMatch(/^\| monolith \| 3 \| 6 \/ 11 \| 5 \/ 3 \| 3 \/ 0 \| 2 \|[^\n]*\| held \| monolith 7\.7 \|$/m);
    expect(section).toMatch(/^\| microservices \| 3 \| 9 \/ 11 \| \d+ \/ 0 \| 0 \/ 0 \| 2 \|[^\n]*\| held \| auth 2\.8, worldgen 0\.2, engine 6\.5, initiator 0\.3, music 3\.2, score 0\.1 \|$/m);
    // That machine did not keep the engine's ticks even without load: the sentence says so.
    expect(section).toMatch(/^- monolith saturates already without load: frame inter-arrival p99 80\.\d ms > 50 ms \(1\.5 ticks\); the engine skipped 5 tick\(s\)\. Games ended off the simulator's score \(a press applied a tick late\): 3 at 3 players\.$/m);
    const html = await readFile(files.html, "utf8");
    expect(html).toContain('<a href="#load">Load</a>');
    expect(html.slice(html.indexOf('<section id="load">')).split('<div class="chart"').length - 1).toBeGreaterThanOrEqual(2);
  });
});
