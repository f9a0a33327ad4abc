// Section "idle": one hop at a game's pace, against a Go reference. ghz (grpc-go, a client nobody
// here wrote) calls FlapLab's world generator (the host, runtime and worldgen component of a
// microservices worldgen process) and a minimal Go gRPC world generator (bench/go-worldgen-server:
// grpc-go and FlappyGo's generator), back to back and at 30 calls/s (one per 33 ms tick, both
// processes idle in between), the servers in turn, round after round, in one run. A third server,
// node:http2 answering a pre-encoded world (h2-floor-server.ts), is Node's floor: what the same hop
// costs Node with no per-call work of FlapLab's.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { GhzReport } from "@flaplab/testkit/ghz";
import { type Child, spawned, startChild } from "./child.js";
import { buildGoProgram, goUnavailable } from "./go-build.js";
import { scale } from "./hist.js";
import { GHZ, okLatencies, runGhz } from "./overload.js";
import { benchKeys } from "./rpc-fixture.js";
import type { RpcServerPorts } from "./rpc-server.js";
import { type GoalResult, metText, type RunOptions, type SectionResult } from "./section.js";
import { sig } from "./table.js";

const SERVERS: readonly Server[] = ["flaplab", "go", "node-floor"];
const LABELS: Record<Server, string> = { go: "Go reference (grpc-go)", flaplab: "FlapLab worldgen (Node)", "node-floor": "Node's floor (node:http2, no per-call work)" };

/** Calls per tick: the study's pace. */
export const IDLE_GAP_MS = 33;
const FULL = { warm: 2000, rounds: 3, backToBack: 3000, paced: 300 };
const QUICK = { warm: 50, rounds: 1, backToBack: 50, paced: 10 };
/** Goals at a game's pace, against the Go reference measured in the same run. */
export const IDLE_P50_GOAL = 1.1;
export const IDLE_P99_GOAL = 1.5;

export type Server = "flaplab" | "go" | "node-floor";
export type Pace = "back-to-back" | "paced";

/** One server at one pace in one round: ghz's OK latencies (µs) and the server's CPU per call. */
export interface IdleMeasurement {
  readonly round: number;
  readonly server: Server;
  readonly pace: Pace;
  readonly calls: number;
  readonly p50: number | null;
  readonly p99: number | null;
  /** The server process's user + system CPU over the run ÷ calls, µs (from /proc, 10 ms ticks: over hundreds of calls). */
  readonly cpuUsPerCall: number | null;
}

/** CPU time (user + system) of a process so far, µs; null where /proc cannot tell. */
async function processCpuUs(pid: number): Promise<number | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A reference server (the Go one, Node's floor): started, its port read from its first line; stopped by closing its stdin. */
async function startReference(what: string, command: string, args: readonly string[]): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const proc: ChildProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  await spawned(proc);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not say where it listens within 10 s`)), 10_000);
    createInterface({ input: proc.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      const m = /^listening (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`${what} said "${line}"`));
    });
    proc.once("exit", (code) => reject(new Error(`${what} exited (${code})`)));
  });
  return {
    port,
    pid: proc.pid!,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      proc.stdin!.end();
      const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function summarize(report: GhzReport): { calls: number; p50: number | null; p99: number | null } {
  const us = scale(okLatencies(report).summary(), 1000);
  return { calls: us.samples, p50: us.p50, p99: us.p99 };
}

const median = (values: readonly number[]): number | null => {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const spread = (values: readonly number[]): string =>
  values.length === 0 ? "–" : values.length === 1 ? sig(values[0]) : `${sig(median(values))} (${sig(Math.min(...values))}–${sig(Math.max(...values))})`;
const numbers = (xs: readonly (number | null)[]): number[] => xs.filter((x): x is number => x !== null);

/** Each round's ratio of `key` at `pace`: `server` ÷ `base` (FlapLab ÷ Go unless told). */
export function roundRatios(ms: readonly IdleMeasurement[], pace: Pace, key: "p50" | "p99", server: Server = "flaplab", base: Server = "go"): number[] {
  const out: number[] = [];
  for (const round of new Set(ms.map((m) => m.round))) {
    const f = ms.find((m) => m.round === round && m.pace === pace && m.server === server)?.[key];
    const g = ms.find((m) => m.round === round && m.pace === pace && m.server === base)?.[key];
    if (f != null && g != null && g > 0) out.push(f / g);
  }
  return out;
}

export async function runIdleHop(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const budget = opts.quick ? QUICK : FULL;
  const title = "Idle hop: a call at a game's pace, FlapLab's worldgen against a Go gRPC reference (ghz)";
  const missing = !existsSync(GHZ) ? "needs ghz (pnpm run setup:ghz)" : await goUnavailable("go-worldgen-server");
  if (missing !== null) {
    return { id: "idle", title, table: { headers: ["pace", "server"], rows: [] }, notes: [`Not run: ${missing}.`], goals: [], data: { skipped: missing }, seconds: 0 };
  }
  const binary = await buildGoProgram("go-worldgen-server", opts.log);
  const dir = await mkdtemp(join(opts.workDir, "idle-"));
  const token = await (await benchKeys(dir)).callerToken();
  let flaplab: Child | undefined;
  let go: Awaited<ReturnType<typeof startReference>> | undefined;
  let floor: Awaited<ReturnType<typeof startReference>> | undefined;
  const measurements: IdleMeasurement[] = [];
  try {
    flaplab = await startChild("rpc-server.ts");
    const ports = await flaplab.request<RpcServerPorts>({ type: "start", keysDir: dir });
    go = await startReference("the Go world generator", binary, ["-addr", "127.0.0.1:0"]);
    floor = await startReference("Node's HTTP/2 floor", process.execPath, ["--import", "tsx", join(import.meta.dirname, "h2-floor-server.ts")]);
    const servers: Record<Server, { address: string; pid: number }> = {
      flaplab: { address: `127.0.0.1:${ports.worldgen}`, pid: flaplab.pid },
      go: { address: `127.0.0.1:${go.port}`, pid: go.pid },
      "node-floor": { address: `127.0.0.1:${floor.port}`, pid: floor.pid },
    };
    const ghz = (server: Server, args: string[], loadMs: number) => runGhz(["--concurrency=1", ...args], servers[server].address, token, loadMs);
    for (const server of SERVERS) await ghz(server, ["-n", String(budget.warm)], 120_000);
    for (let round = 1; round <= budget.rounds; round++) {
      // The servers in turn, the order rotating, so that a slow spell of the machine falls on each.
      const order = SERVERS.map((_, i) => SERVERS[(i + round - 1) % SERVERS.length]!);
      for (const server of order) {
        for (const pace of ["back-to-back", "paced"] as const) {
          const args = pace === "paced" ? [`--rps=${Math.round(1000 / IDLE_GAP_MS)}`, "-n", String(budget.paced)] : ["-n", String(budget.backToBack)];
          const loadMs = pace === "paced" ? budget.paced * IDLE_GAP_MS : budget.backToBack * 5;
          const before = await processCpuUs(servers[server].pid);
          const s = summarize(await ghz(server, args, loadMs));
          const after = await processCpuUs(servers[server].pid);
          const cpuUsPerCall = before === null || after === null || s.calls === 0 ? null : (after - before) / s.calls;
          measurements.push({ round, server, pace, ...s, cpuUsPerCall });
          opts.log(`  idle round ${round} ${server} ${pace}: p50 ${sig(s.p50)} µs, p99 ${sig(s.p99)} µs, server CPU ${sig(cpuUsPerCall)} µs/call`);
        }
      }
    }
  } finally {
    await go?.stop();
    await floor?.stop();
    await flaplab?.stop();
  }

  const rows: string[][] = [];
  for (const pace of ["back-to-back", "paced"] as const) {
    for (const server of ["go", "node-floor", "flaplab"] as const) {
      const ms = measurements.filter((m) => m.pace === pace && m.server === server);
      const ratio = (key: "p50" | "p99", base: Server): string => (server === base ? "1" : spread(roundRatios(measurements, pace, key, server, base)));
      const floorCell = server === "go" ? "–" : ratio("p50", "node-floor");
      rows.push([
        pace === "paced" ? `one call per ${IDLE_GAP_MS} ms` : "back to back",
        LABELS[server],
        spread(numbers(ms.map((m) => m.p50))),
        spread(numbers(ms.map((m) => m.p99))),
        spread(numbers(ms.map((m) => m.cpuUsPerCall))),
        ratio("p50", "go"),
        ratio("p99", "go"),
        floorCell,
      ]);
    }
  }
  const pacedP50 = median(roundRatios(measurements, "paced", "p50"));
  const pacedP99 = median(roundRatios(measurements, "paced", "p99"));
  const floorP50 = median(roundRatios(measurements, "paced", "p50", "node-floor", "go"));
  const judged = !opts.quick;
  const goals: GoalResult[] = [
    {
      section: "idle",
      goal: `paced p50 ≤ ${IDLE_P50_GOAL}× the Go reference (ghz, same run)`,
      measured: `${sig(pacedP50)}×`,
      met: judged && pacedP50 !== null ? pacedP50 <= IDLE_P50_GOAL : null,
    },
    {
      section: "idle",
      goal: `paced p99 ≤ ${IDLE_P99_GOAL}× the Go reference (ghz, same run)`,
      measured: `${sig(pacedP99)}×`,
      met: judged && pacedP99 !== null ? pacedP99 <= IDLE_P99_GOAL : null,
    },
  ];
  return {
    id: "idle",
    title,
    table: {
      headers: ["pace", "server", "p50 µs", "p99 µs", "server CPU µs/call", "p50 ÷ Go", "p99 ÷ Go", "p50 ÷ Node's floor"],
      rows,
    },
    notes: [
      `ghz (grpc-go) on one connection, one call at a time, the GenerateWorld request of the study (480×640, one seed); ${budget.warm} back-to-back calls warm each server first. Each round: ${budget.backToBack} calls back to back, then ${budget.paced} at ${Math.round(1000 / IDLE_GAP_MS)} calls/s, on each server in turn (the first one alternating); ${budget.rounds} round(s). Cells: the median of the rounds (their range); ratios are FlapLab ÷ Go within each round.`,
      "FlapLab: the world generator behind the host and runtime, as a microservices worldgen process runs it (token checked, call logged). Go: bench/go-worldgen-server, grpc-go with FlappyGo's generator and no credential check. Node's floor: node:http2's stream API answering every call with the same world encoded once (bench/src/h2-floor-server.ts), no per-call work: the part of FlapLab's figure that is Node's own, which no change in FlapLab removes.",
      `Server CPU: the process's user + system time from /proc over the run ÷ calls. At a game's pace both servers spend several times their back-to-back CPU per call: their work runs on cold caches after 33 ms asleep (docs/measurements/2026-11-28-bench-where-the-time-goes.md, "A hop at a game's pace").`,
      ...goals.map((g) => `Goal: ${g.goal}: ${g.measured}, ${metText(g.met)}.`),
      `Node's floor at a game's pace: p50 ${sig(floorP50)}× Go's; FlapLab ${sig(median(roundRatios(measurements, "paced", "p50", "flaplab", "node-floor")))}× the floor.`,
    ],
    goals,
    data: { measurements },
    seconds: (performance.now() - started) / 1000,
  };
}
