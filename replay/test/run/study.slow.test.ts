import { execFileSync, spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseStudyArgs, runStudy } from "../../src/study/study.js";
import { REPO, topologyOnFreePorts } from "./free-topology.js";

// `pnpm study` in small: two deployments (one with emulated multi-region latency), two rounds,
// one run each per round over each stream link.
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("the one-command study", () => {
  it("runs each deployment, replays the trace and writes one report with them side by side", async () => {
    const mono = await topologyOnFreePorts("monolith");
    const multi = await topologyOnFreePorts("multiregion");
    dirs.push(mono.dir, multi.dir);
    const out = join(mono.dir, "study");
    const opts = parseStudyArgs(
      [
        "--runs", "2", "--out", out, "--deployments", `${mono.file},${multi.file}`, "--trace", "replay/traces/6977347407732442987.csv",
        "--links", "webtransport,websocket",
      ],
      REPO,
      REPO,
    );
    const lines: string[] = [];
    const result = await runStudy(opts, (l) => lines.push(l));
    expect(result, lines.join("\n")).toMatchObject({ ok: 8, failed: 0 });
    // Both deployments up at once, taking turns: the order rotates each round.
    const names = [basename(mono.file, ".json"), basename(multi.file, ".json")];
    expect(lines).toContain(`study: round 1/2: ${names[0]}, ${names[1]}`);
    expect(lines).toContain(`study: round 2/2: ${names[1]}, ${names[0]}`);
    expect(lines.some((l) => /engine->music +cross-region +RTT +27 ms/.test(l))).toBe(true);
    // Each deployment warmed up first, over each link, with a game kept apart from the measured runs.
    for (const name of names) {
      expect(lines).toContain(`study:   ${name}: warmed up with 1 unrecorded game(s), 1 ok`);
      expect(lines).toContain(`study:   ${name}+websocket: warmed up with 1 unrecorded game(s), 1 ok`);
      const warm = JSON.parse(await readFile(join(out, "warmup", name, "6977347407732442987", "run-001", "summary.json"), "utf8"));
      expect(warm.status).toBe("ok");
    }
    expect(lines.findIndex((l) => l.includes("warmed up"))).toBeLessThan(lines.indexOf(`study: round 1/2: ${names[0]}, ${names[1]}`));

    const md = await readFile(join(out, "report", "report.md"), "utf8");
    const comparison = md.slice(md.indexOf("## Comparison"), md.indexOf("\n## ", md.indexOf("## Comparison") + 5));
    expect(comparison).toMatch(/\| monolith \| 6977347407732442987 \| 2 \/ 2 \|/);
    expect(comparison).toMatch(/\| multiregion \| 6977347407732442987 \| 2 \/ 2 \|/);
    expect(comparison).toMatch(/\| monolith\+websocket \| 6977347407732442987 \| 2 \/ 2 \|/);
    expect(comparison).toMatch(/\| multiregion\+websocket \| 6977347407732442987 \| 2 \/ 2 \|/);
    // Input → next audio crosses browser→engine, engine→music and music→browser: far more in multiregion.
    const audioMedian = (name: string) => Number(new RegExp(`\\| ${name} \\|[^\\n]*`).exec(comparison)![0].split("|")[6]!.split("/")[0]!.trim());
    expect(audioMedian("multiregion")).toBeGreaterThan(audioMedian("monolith") + 60);
    // The WebSocket link crosses the same emulated links.
    expect(audioMedian("multiregion\\+websocket")).toBeGreaterThan(audioMedian("monolith\\+websocket") + 60);
    // Run N of each deployment paired: multiregion's penalty on input → audio, an interval that excludes 0.
    const penalty = /\| multiregion \| 6977347407732442987 \| input-to-audio \| 2 \| ([\d.]+) \| ([\d.]+) … ([\d.]+) \| no \|/.exec(md);
    expect(penalty, md).not.toBeNull();
    expect(Number(penalty![2])).toBeGreaterThan(50);
    // Every run recorded its servers' CPU: the monolith's one process, multiregion's per component and in all.
    const summary = JSON.parse(await readFile(join(out, "runs", "multiregion", "6977347407732442987", "run-002", "summary.json"), "utf8"));
    expect(summary.serverCpu.groups.map((g: { group: string }) => g.group).sort()).toEqual(["auth", "engine", "initiator", "music", "score", "worldgen"]);
    for (const g of summary.serverCpu.groups) expect(g.cpuUs).toBeGreaterThan(0);
    const cpu = md.slice(md.indexOf("**Server CPU"));
    expect(cpu).toMatch(/\| monolith \| 6977347407732442987 \| [^|]+ \(auth, worldgen, engine, initiator, music, score\) \| 2 \|/);
    const engine = /\| multiregion \| 6977347407732442987 \| engine \(engine\) \| 2 \|([^\n]*)/.exec(cpu);
    expect(engine, cpu).not.toBeNull();
    const [perGame, start, perGameSecond, idle, net, , , perFrame, , gamesPerCore] = engine![1]!.split("|").map((c) => c.trim());
    // The game's start (StartGame here) is a part of the game's CPU, split off its play.
    expect(Number(start)).toBeGreaterThan(0);
    expect(Number(start)).toBeLessThan(Number(perGame));
    expect(Number(perGameSecond)).toBeGreaterThan(0);
    expect(Number(perFrame)).toBeCloseTo(Number(perGameSecond) / 30, -1);
    // The engine's background with no game, per second, and a game's cost beyond it.
    expect(Number(idle)).toBeGreaterThanOrEqual(0);
    expect(Number(net)).toBeCloseTo(Math.max(0, Number(perGameSecond) - Number(idle)), -1);
    expect(Number(gamesPerCore)).toBeCloseTo(1e6 / Number(net), -1);
    expect(cpu).toMatch(/\| multiregion \| 6977347407732442987 \| all \(/);
    await readFile(join(out, "report", "report.html"));
  }, 420_000);

  it("runs a duet: two deployments playing the same trace at the same time, paired press by press", async () => {
    const mono = await topologyOnFreePorts("monolith");
    const micro = await topologyOnFreePorts("microservices");
    dirs.push(mono.dir, micro.dir);
    const out = join(mono.dir, "duet");
    const opts = parseStudyArgs(["--runs", "2", "--out", out, "--duet", `${mono.file},${micro.file}`, "--trace", "replay/traces/6977347407732442987.csv"], REPO, REPO);
    const lines: string[] = [];
    const result = await runStudy(opts, (l) => lines.push(l));
    expect(result, lines.join("\n")).toMatchObject({ ok: 4, failed: 0 });
    const [a, b] = [basename(mono.file, ".json"), basename(micro.file, ".json")];
    const summary = async (name: string, run: string) =>
      JSON.parse(await readFile(join(out, "runs", name, "6977347407732442987", run, "summary.json"), "utf8"));
    for (const run of ["run-001", "run-002"]) {
      const [sa, sb] = [await summary(a, run), await summary(b, run)];
      expect(sa.duet).toMatchObject({ partner: b, reference: a });
      expect(sb.duet).toMatchObject({ partner: a, reference: a });
      // Started together: the two games' starts differ by the two start-game latencies' difference.
      expect(sb.duet.startSkewMs).toBeCloseTo(-sa.duet.startSkewMs, 3);
      expect(Math.abs(sb.duet.startSkewMs)).toBeLessThan(1000);
      // The two games overlapped nearly all their length.
      const [ta, tb] = [Date.parse(sa.startedAt), Date.parse(sb.startedAt)];
      expect(Math.abs(ta - tb)).toBeLessThan(2000);
    }
    const md = await readFile(join(out, "report", "report.md"), "utf8");
    const row = new RegExp(`\\| ${b} \\| ${a} \\| 6977347407732442987 \\| input-to-audio \\| 2 \\| (\\d+) \\|`).exec(md);
    expect(row, md).not.toBeNull();
    expect(Number(row![1])).toBeGreaterThan(20);
  }, 300_000);

  it("stops the deployments it started when it is interrupted", async () => {
    const mono = await topologyOnFreePorts("monolith");
    dirs.push(mono.dir);
    const child = spawn(process.execPath, ["--import", "tsx", "replay/bin/study.ts", "--runs", "1", "--deployments", mono.file, "--out", join(mono.dir, "out")], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const running = new Promise<void>((resolve) => {
      child.stdout.on("data", (b: Buffer) => {
        output += b.toString();
        if (output.includes("round 1/1")) resolve();
      });
    });
    child.stderr.on("data", (b: Buffer) => (output += b.toString()));
    await running;
    // The deployment's servers are up: their command lines name the topology copy's folder.
    const servers = () => execFileSync("pgrep", ["-f", mono.dir]).toString().trim().split("\n").filter((p) => p !== String(child.pid));
    expect(servers().length, output).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited, output).toBe(143);
    expect(output).toContain("SIGTERM: stopping the deployments");
    expect(() => servers()).toThrow(); // pgrep exits 1: no process left
  }, 120_000);

  it("takes --tls for calls between regions over https:// (off by default)", () => {
    expect(parseStudyArgs([], REPO, REPO).tls).toBe(false);
    expect(parseStudyArgs(["--tls", "--deployments", "multiregion"], REPO, REPO)).toMatchObject({ tls: true, deployments: ["multiregion"] });
  });
});
