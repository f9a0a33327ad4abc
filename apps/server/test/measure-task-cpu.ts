// What a cloud task's CPU quota must hold: the built server (the image's command, no engine shard
// processes, as in the cloud), one process per group of a topology, measured for one `--group`, while players register, log in, start a
// game and play it to its end over the WebSocket link, `--games` at once, `--rounds` times (the
// first round on a cold process). The server's CPU time is read every 100 ms, Fargate's quota
// period, from /proc/<pid>/task/*/schedstat (nanoseconds, all threads: scrypt's thread pool too).
// A window above a size's share (0.25 vCPU: 25 ms of every 100 ms) is one the task would be
// throttled in. Needs `pnpm build` first.
//
//   pnpm build && npx tsx apps/server/test/measure-task-cpu.ts --games 1 --rounds 3
//   npx tsx apps/server/test/measure-task-cpu.ts --topology microservices --group engine
import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { pino } from "pino";
import { REPO, topologyOnFreePorts } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, playOver, startGame } from "./play.js";

const log = pino({ base: null });
const { values } = parseArgs({
  options: {
    games: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    topology: { type: "string", default: "monolith" },
    group: { type: "string", default: "monolith" },
  },
});
const games = Number(values.games);
const rounds = Number(values.rounds);
if (!Number.isInteger(games) || games < 1 || !Number.isInteger(rounds) || rounds < 1) {
  throw new Error(`--games and --rounds must be whole numbers ≥ 1 (got ${values.games}, ${values.rounds})`);
}
const SERVER_DIR = join(REPO, "apps/server");
if (!(await stat(join(SERVER_DIR, "dist/main.js")).catch(() => undefined))) throw new Error("apps/server/dist/main.js is missing: run `pnpm build` first");

const WINDOW_MS = 100;
/** Fargate sizes' share of a 100 ms quota period, in ms. */
const QUOTAS = { "0.25 vCPU": 25, "0.5 vCPU": 50, "1 vCPU": 100 } as const;

async function cpuNs(pid: number): Promise<number> {
  let total = 0;
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const text = await readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8").catch(() => "0");
    total += Number(text.split(" ")[0]);
  }
  return total;
}

const topo = await topologyOnFreePorts(values.topology);
const groups = Object.keys(topo.addresses).filter((g) => g !== "web");
if (!groups.includes(values.group)) throw new Error(`no group "${values.group}" in ${values.topology} (groups: ${groups.join(", ")})`);
const servers = new Map<string, ChildProcess>();
/** Starts one group of the topology as the image does, one process per group (they share the data dir's keys). */
async function startGroup(group: string): Promise<ChildProcess> {
  const child = spawn("node", ["--conditions=built", "dist/main.js"], {
    cwd: SERVER_DIR,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", FLAPLAB_TOPOLOGY: topo.file, FLAPLAB_GROUP: group, FLAPLAB_DATA_DIR: join(topo.dir, "data") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  servers.set(group, child);
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`group ${group} exited (${code})`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.includes('"event":"listening"')) resolve();
    });
  });
  return child;
}
try {
  for (const group of groups) await startGroup(group);
  const pid = servers.get(values.group)!.pid!;
  const baseUrl = `http://${topo.addresses[groups.includes("auth") ? "auth" : values.group]}`;
  const auth = createClient(AuthService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  const initiatorUrl = `http://${topo.addresses[groups.includes("initiator") ? "initiator" : values.group]}`;

  for (let round = 1; round <= rounds; round++) {
    // Windows while any player is still registering or logging in (scrypt), and those after.
    const windows: { ms: number; phase: "auth" | "game" }[] = [];
    let inAuth = games;
    let last = await cpuNs(pid);
    const started = process.hrtime.bigint();
    const timer = setInterval(async () => {
      const now = await cpuNs(pid);
      windows.push({ ms: (now - last) / 1e6, phase: inAuth > 0 ? "auth" : "game" });
      last = now;
    }, WINDOW_MS);
    const cpuBefore = last;
    const scores = await Promise.all(
      Array.from({ length: games }, async (_, i) => {
        const username = `cpu-${round}-${i}-${Date.now()}`;
        await auth.register({ username, password: "a long enough password" });
        const token = (await auth.login({ username, password: "a long enough password" })).session!.token;
        inAuth--;
        const game = await startGame(initiatorUrl, token, EASY_SEED);
        const played = await playOver(game, EASY_FLAP_TICKS);
        return played.score;
      }),
    );
    clearInterval(timer);
    const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
    const cpuMs = ((await cpuNs(pid)) - cpuBefore) / 1e6;
    const summary = (phase: "auth" | "game") => {
      const ms = windows.filter((w) => w.phase === phase).map((w) => w.ms);
      const sorted = [...ms].sort((a, b) => a - b);
      const pick = (q: number) => Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1));
      return {
        windows: ms.length,
        cpuMs: Math.round(ms.reduce((a, b) => a + b, 0)),
        windowMs: { p50: pick(0.5), p99: pick(0.99), max: Number((sorted.at(-1) ?? 0).toFixed(1)) },
        windowsOverQuota: Object.fromEntries(Object.entries(QUOTAS).map(([size, q]) => [size, ms.filter((w) => w > q).length])),
      };
    };
    log.info(
      {
        event: "round",
        topology: values.topology,
        group: values.group,
        round,
        games,
        scores,
        wallMs: Math.round(wallMs),
        cpuMs: Math.round(cpuMs),
        meanVcpu: Number((cpuMs / wallMs).toFixed(3)),
        auth: summary("auth"),
        game: summary("game"),
      },
      "cpu per 100 ms window",
    );
  }
} finally {
  for (const child of servers.values()) child.kill("SIGTERM");
  await rm(topo.dir, { recursive: true, force: true });
}
