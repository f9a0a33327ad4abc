// The image's server without docker build: the packages built to dist/ as the Dockerfile builds
// them, then the Dockerfile's CMD (its entry point and `node --conditions=built dist/main.js`) run
// from the image's working directory, with no TypeScript loader anywhere. On Node 20 a single
// import that still resolved to a .ts source would stop it (ERR_UNKNOWN_FILE_EXTENSION).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOAD_ENTRY } from "@flaplab/infra";
import { REPO, topologyOnFreePorts } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, playOver, startGame } from "./play.js";

const SERVER_DIR = join(REPO, "apps/server");
const DOCKERFILE = join(SERVER_DIR, "Dockerfile");
/** Where the Dockerfile copies the repository. */
const IMAGE_ROOT = "/app";

/** The last stage's WORKDIR and CMD (exec form) of a Dockerfile. */
function imageStart(dockerfile: string): { workdir: string; cmd: string[] } {
  const lines = dockerfile.split("\n");
  const lastFrom = lines.findLastIndex((l) => l.startsWith("FROM "));
  const stage = lines.slice(lastFrom);
  const workdir = stage.findLast((l) => l.startsWith("WORKDIR "))?.slice("WORKDIR ".length).trim();
  const cmd = stage.findLast((l) => l.startsWith("CMD "))?.slice("CMD ".length);
  if (!workdir || !cmd) throw new Error("the Dockerfile's last stage has no WORKDIR or no CMD");
  return { workdir, cmd: JSON.parse(cmd) as string[] };
}

/** An image path (under /app) as the same path in this checkout. */
const inCheckout = (p: string) => (p.startsWith(`${IMAGE_ROOT}/`) ? join(REPO, p.slice(IMAGE_ROOT.length + 1)) : p);

let server: ChildProcess | undefined;
const stdout: string[] = [];
let dir = "";
let baseUrl = "";

beforeAll(async () => {
  const dockerfile = await readFile(DOCKERFILE, "utf8");
  // The build step the Dockerfile runs (turbo builds the server and every package it imports).
  const build = /pnpm exec turbo run build --filter "@flaplab\/server" --filter "@flaplab\/load"/.exec(dockerfile);
  expect(build, "the Dockerfile builds the server and the load generator with turbo").not.toBeNull();
  const started = Date.now();
  await promisify(execFile)("pnpm", ["exec", "turbo", "run", "build", "--filter", "@flaplab/server", "--filter", "@flaplab/load", "--output-logs=errors-only"], {
    cwd: REPO,
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
    maxBuffer: 16 << 20,
  });
  // Built now (or restored by turbo's cache from an identical build).
  expect((await stat(join(SERVER_DIR, "dist/main.js"))).isFile()).toBe(true);
  console.log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const { workdir, cmd } = imageStart(dockerfile);
  const topo = await topologyOnFreePorts("monolith");
  dir = topo.dir;
  const json = await readFile(topo.file, "utf8");
  const [command, ...args] = cmd.map(inCheckout);
  // The container's environment: no NODE_OPTIONS, no tsx; one engine shard, so that a game also
  // runs in a forked built shard process.
  server = spawn(command!, args, {
    cwd: inCheckout(workdir),
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      FLAPLAB_TOPOLOGY_JSON: json,
      FLAPLAB_GROUP: "monolith",
      FLAPLAB_DATA_DIR: join(dir, "data"),
      FLAPLAB_ENGINE_SHARDS: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const listening = new Promise<void>((resolve, reject) => {
    server!.once("exit", (code) => reject(new Error(`the built server exited (${code}):\n${stdout.slice(-20).join("\n")}`)));
    for (const stream of [server!.stdout!, server!.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        stdout.push(line);
        if (line.includes('"event":"listening"')) resolve();
      });
    }
  });
  await Promise.race([listening, new Promise((_, reject) => setTimeout(() => reject(new Error(`not listening after 30 s:\n${stdout.join("\n")}`)), 30_000))]);
  baseUrl = `http://${topo.addresses["monolith"]}`;
}, 300_000);

afterAll(async () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The engine shard's pid, from the server's `listening` line. */
function shardPid(): number {
  const line = stdout.find((l) => l.includes('"event":"listening"'))!;
  const pids = (JSON.parse(line) as { engineShards?: number[] }).engineShards ?? [];
  expect(pids).toHaveLength(1);
  return pids[0]!;
}

/** User + system CPU time of a process, in clock ticks (/proc/<pid>/stat fields 14 and 15). */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

describe("the built server, started as the image starts it", () => {
  it("runs the image's command: node on dist/ with the built condition, from the server's folder", async () => {
    const { workdir, cmd } = imageStart(await readFile(DOCKERFILE, "utf8"));
    const pkg = JSON.parse(await readFile(join(SERVER_DIR, "package.json"), "utf8")) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(workdir).toBe(`${IMAGE_ROOT}/apps/server`);
    expect(cmd.slice(0, 2)).toEqual(["sh", `${IMAGE_ROOT}/apps/server/container-start.sh`]);
    // `pnpm start` is the same command, and nothing the server needs at run time compiles TypeScript.
    expect(cmd.slice(2).join(" ")).toBe(pkg.scripts["start"]);
    expect(pkg.dependencies).not.toHaveProperty("tsx");
    const health = (await (await fetch(`${baseUrl}/healthz`)).json()) as { status: string; components: string[] };
    expect(health).toMatchObject({ status: "ok", components: ["auth", "worldgen", "engine", "initiator", "music", "score"] });
  });

  it("plays the easy seed to 7 on a built engine shard, records the run, and copies the call log to stdout", async () => {
    const auth = createClient(AuthService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const token = (await auth.register({ username: "built", password: "a long enough password" })).session!.token;
    const shard = shardPid();
    // The pool forked the built shard entry (with the parent's --conditions=built and the engine's Node flags).
    const shardArgs = (await readFile(`/proc/${shard}/cmdline`, "utf8")).split("\0");
    expect(shardArgs).toContain(join(SERVER_DIR, "../../packages/game/engine-shards/dist/shard-main.js"));
    expect(shardArgs).toEqual(expect.arrayContaining(["--conditions=built", "--max-semi-space-size=2"]));
    const cpuBefore = await cpuTicks(shard);
    const game = await startGame(baseUrl, token, EASY_SEED);
    const played = await playOver(game, EASY_FLAP_TICKS);
    expect(played).toMatchObject({ score: 7, lastTick: 402, close: { code: 0, reason: "game over" } });
    expect(played.summary).toMatchObject({ score: 7, recorded: true });
    const scores = createClient(ScoreService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const { ownRuns } = await scores.getScores({}, { headers: { authorization: `Bearer ${token}` } });
    expect(ownRuns.find((r) => r.gameId === game.gameId)).toMatchObject({ score: 7, ticks: 402 });
    // The game ran in that shard process: it spent CPU time while the game played (an idle one spends none).
    expect(await cpuTicks(shard)).toBeGreaterThan(cpuBefore);
    // The entry point follows the call log: the RecordRun record reaches stdout (CloudWatch in the cloud).
    const deadline = Date.now() + 5_000;
    const recordRun = () => stdout.some((l) => l.includes('"msg":"rpc"') && l.includes('"dstVerb":"RecordRun"') && l.includes(game.gameId));
    while (!recordRun() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(recordRun()).toBe(true);
    await writeFile(join(dir, "stdout.log"), stdout.join("\n"));
  }, 60_000);

  it("runs the built load generator as a cloud load task runs it: bots play against it, every game completed", async () => {
    // The plan's command (infra's LOAD_ENTRY, `--workers 1`), with no TypeScript loader: its worker processes are built too.
    const { stdout: out, stderr } = await promisify(execFile)(
      "node",
      ["--conditions=built", inCheckout(LOAD_ENTRY), "--url", baseUrl, "--workers", "1", "--players", "2", "--duration", "3s", "--drain", "20s"],
      { cwd: inCheckout(`${IMAGE_ROOT}/apps/server`), env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" }, maxBuffer: 16 << 20 },
    );
    expect(out, stderr).toMatch(/games: started (\d+), completed \1, failed 0, unfinished at drain 0, lost 0/);
    expect(out).toMatch(/verdict: the load generator held this level/);
  }, 120_000);
});
