// Section 1: the same unary call in every call mode, closed loop, one call at a time.
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createHandlerContext, type Client } from "@connectrpc/connect";
import type { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { createCallLogger, createRuntime, pinoCallLog, type Runtime } from "@flaplab/runtime";
import { worldgenComponent } from "@flaplab/worldgen";
import { pino } from "pino";
import { type Child, startChild } from "./child.js";
import { Hist, type Percentiles, scale } from "./hist.js";
import {
  benchKeys,
  benchRequest,
  clientTopology,
  inProcessTopology,
  NETWORK_MODES,
  type Workload,
  worldGenFor,
} from "./rpc-fixture.js";
import { existsSync } from "node:fs";
import { GHZ, okLatencies, runGhz } from "./overload.js";
import type { CpuSample, RpcServerPorts } from "./rpc-server.js";
import { type GoalResult, metText, type RunOptions, type SectionResult } from "./section.js";
import { count, ratio, sig } from "./table.js";

export interface CallRow {
  readonly workload: Workload;
  readonly mode: string;
  readonly label: string;
  /** µs. */
  readonly latency: Percentiles;
  /** p50 of this mode ÷ p50 of the bare call of the same workload. */
  readonly p50VsBare: number | null;
  /** Networked modes: the server process's CPU time (user + system) per call, µs. */
  readonly serverCpuUs?: number;
}

/** The independent client's row: ghz (grpc-go), gRPC over h2c, one call at a time. */
export const GHZ_MODE = "ghz-grpc-h2c";
/** A game's pace: one call per tick (33 ms) with the machine idle in between, as in a study. */
export const PACED_GAP_MS = 33;
const PACED = { full: 150, quick: 5 };

interface Budget {
  readonly warm: number;
  readonly count: number;
  readonly maxMs: number;
}

const FULL: Record<"bare" | "inproc" | "net", Budget> = {
  bare: { warm: 20_000, count: 200_000, maxMs: 1500 },
  inproc: { warm: 5000, count: 100_000, maxMs: 2000 },
  // 5,000 warm-up calls: with 1,000 the p99 still caught V8 optimizing the call path (README, "Warm-up").
  net: { warm: 5000, count: 10_000, maxMs: 2500 },
};
const QUICK: Record<"bare" | "inproc" | "net", Budget> = {
  bare: { warm: 200, count: 1000, maxMs: 200 },
  inproc: { warm: 100, count: 300, maxMs: 200 },
  net: { warm: 30, count: 100, maxMs: 300 },
};

/**
 * Calls `fn` one after another (with `gapMs` of idleness before each measured call) and records
 * each call's wall time in ns. Bounded in count and time.
 */
export async function timeCalls(fn: () => unknown, budget: Budget, gapMs = 0): Promise<Hist> {
  for (let i = 0; i < budget.warm; i++) await fn();
  const h = new Hist();
  const deadline = performance.now() + budget.maxMs;
  for (let i = 0; i < budget.count; i++) {
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    const t = performance.now();
    await fn();
    h.record((performance.now() - t) * 1e6);
    if ((i & 63) === 63 && performance.now() > deadline) break;
  }
  return h;
}

/** A direct call through the runtime may cost at most this much over the bare handler call, µs (p50). */
export const DIRECT_OVERHEAD_GOAL_US = 1.5;
export const NET_P50_GOAL_US = 300;
export const NET_P99_GOAL_US = 1000;
/** The server process's CPU per networked call, µs (Go's server: 200–430 µs). */
export const SERVER_CPU_GOAL_US = 250;
/** FlappyGo's Go gRPC over TLS p99 on this machine type: quoted reference, not measured here. */
export const NET_P99_REFERENCE_US: readonly [number, number] = [660, 924];

export async function runCalls(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const budgets = opts.quick ? QUICK : FULL;
  const dir = await mkdtemp(join(opts.workDir, "calls-"));
  const keys = await benchKeys(dir);
  const token = await keys.callerToken();
  const callOptions = { headers: { authorization: `Bearer ${token}` } };
  const request = benchRequest();
  const rows: CallRow[] = [];
  let server: Child | undefined;
  // Timer overhead: what an empty call costs to measure.
  const timer = await timeCalls(() => undefined, budgets.bare);

  try {
    server = await startChild("rpc-server.ts");
    const ports = await server.request<RpcServerPorts>({ type: "start", keysDir: dir });
    for (const workload of ["trivial", "worldgen"] as const) {
      const add = (mode: string, label: string, h: Hist, serverCpuUs?: number) => {
        const latency = scale(h.summary(), 1000);
        const bare = rows.find((r) => r.workload === workload && r.mode === "bare");
        rows.push({
          workload,
          mode,
          label,
          latency,
          p50VsBare: bare ? (latency.p50 ?? 0) / (bare.latency.p50 ?? 1) : 1,
          ...(serverCpuUs === undefined ? {} : { serverCpuUs }),
        });
        opts.log(
          `  calls ${workload} ${label}: p50 ${sig(latency.p50)} µs (${latency.samples} samples)` +
            (serverCpuUs === undefined ? "" : `, server CPU ${sig(serverCpuUs)} µs/call`),
        );
      };
      const cpu = () => server!.request<CpuSample>({ type: "cpu" });
      const impl = worldGenFor(workload);
      const ctx = createHandlerContext({
        service: worldgenComponent.service,
        method: worldgenComponent.service.method.generateWorld,
        protocolName: "bare",
        requestMethod: "POST",
        url: "bare:/",
      });
      add("bare", "bare function call", await timeCalls(() => impl.generateWorld(request, ctx), budgets.bare));

      for (const [mode, label, logged] of [
        ["direct", "runtime direct", false],
        ["direct+log", "runtime direct + pino call log", true],
        ["serialized", "in-process serialized", false],
      ] as const) {
        const destination = logged ? pino.destination({ dest: "/dev/null", sync: false }) : undefined;
        if (destination) await once(destination, "ready");
        const runtime = createRuntime({
          topology: inProcessTopology(mode === "serialized" ? "serialized" : "direct"),
          group: "all",
          verifier: keys.verifier,
          ...(destination ? { callLog: pinoCallLog(createCallLogger(destination)) } : {}),
        });
        runtime.mount(worldgenComponent, worldGenFor(workload));
        const client = runtime.client(worldgenComponent, "bench");
        add(mode, label, await timeCalls(() => client.generateWorld(request, callOptions), budgets.inproc));
        runtime.close();
        destination?.end();
      }

      for (const net of NETWORK_MODES) {
        const runtime: Runtime = createRuntime({ topology: clientTopology(ports[workload], net.network), group: "bench", verifier: keys.verifier });
        const client: Client<typeof WorldGenService> = runtime.client(worldgenComponent, "bench");
        for (let i = 0; i < budgets.net.warm; i++) await client.generateWorld(request, callOptions);
        const before = await cpu();
        const h = await timeCalls(() => client.generateWorld(request, callOptions), { ...budgets.net, warm: 0 });
        const after = await cpu();
        add(net.id, net.label, h, (after.cpuUs - before.cpuUs) / Math.max(1, h.samples));
        runtime.close();
      }
      if (existsSync(GHZ)) {
        // The same endpoint from a client nobody here wrote: ghz (grpc-go), one call at a time on one connection.
        await runGhz(["--concurrency=1", "-n", String(budgets.net.warm)], `127.0.0.1:${ports[workload]}`, token, budgets.net.maxMs);
        const before = await cpu();
        const report = await runGhz(["--concurrency=1", "-n", String(budgets.net.count)], `127.0.0.1:${ports[workload]}`, token, budgets.net.maxMs);
        const after = await cpu();
        add(GHZ_MODE, "ghz (grpc-go), gRPC h2c", okLatencies(report), (after.cpuUs - before.cpuUs) / Math.max(1, report.count));
      }
      if (workload === "trivial") {
        // The same calls at a game's pace: one per tick, the processes idle in between.
        const paced = opts.quick ? PACED.quick : PACED.full;
        const net = NETWORK_MODES.find((m) => m.id === "connect-proto-h1")!;
        const runtime = createRuntime({ topology: clientTopology(ports[workload], net.network), group: "bench", verifier: keys.verifier });
        const client = runtime.client(worldgenComponent, "bench");
        const budget = { warm: budgets.net.warm, count: paced, maxMs: paced * PACED_GAP_MS + 10_000 };
        const h = await timeCalls(() => client.generateWorld(request, callOptions), budget, PACED_GAP_MS);
        add("connect-proto-h1-paced", `${net.label}, one call per ${PACED_GAP_MS} ms`, h);
        runtime.close();
        if (existsSync(GHZ)) {
          const report = await runGhz(["--concurrency=1", `--rps=${Math.round(1000 / PACED_GAP_MS)}`, "-n", String(paced)], `127.0.0.1:${ports[workload]}`, token, paced * PACED_GAP_MS + 10_000);
          add("ghz-grpc-h2c-paced", `ghz (grpc-go), gRPC h2c, ${Math.round(1000 / PACED_GAP_MS)} calls/s`, okLatencies(report));
        }
      }
    }
  } finally {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const goals: GoalResult[] = [];
  const goalOf = new Map<CallRow, [string, boolean]>();
  for (const workload of ["trivial", "worldgen"] as const) {
    const direct = rows.find((r) => r.workload === workload && r.mode === "direct")!;
    const bare = rows.find((r) => r.workload === workload && r.mode === "bare")!;
    const overhead = (direct.latency.p50 ?? Infinity) - (bare.latency.p50 ?? 0);
    const met = overhead <= DIRECT_OVERHEAD_GOAL_US;
    goalOf.set(direct, [`≤ bare + ${DIRECT_OVERHEAD_GOAL_US} µs`, met]);
    goals.push({
      section: "1",
      goal: `direct p50 ≤ bare + ${DIRECT_OVERHEAD_GOAL_US} µs (${workload})`,
      measured: `bare + ${sig(overhead)} µs (${sig(direct.p50VsBare)}×)`,
      met,
    });
    const nets = rows.filter((r) => r.workload === workload && NETWORK_MODES.some((m) => m.id === r.mode));
    const best = nets.reduce((a, b) => ((b.latency.p50 ?? Infinity) < (a.latency.p50 ?? Infinity) ? b : a));
    const p50ok = (best.latency.p50 ?? Infinity) <= NET_P50_GOAL_US;
    const p99ok = (best.latency.p99 ?? Infinity) <= NET_P99_GOAL_US;
    goalOf.set(best, [`best networked: p50 ≤ ${NET_P50_GOAL_US}, p99 ≤ ${NET_P99_GOAL_US}`, p50ok && p99ok]);
    goals.push({ section: "1", goal: `best networked p50 ≤ ${NET_P50_GOAL_US} µs (${workload})`, measured: `${sig(best.latency.p50)} µs (${best.label})`, met: p50ok });
    goals.push({
      section: "1",
      goal: `best networked p99 ≤ ${NET_P99_GOAL_US} µs (Go: ${NET_P99_REFERENCE_US.join("–")}*) (${workload})`,
      measured: `${sig(best.latency.p99)} µs (${best.label})`,
      met: p99ok,
    });
    if (workload === "trivial") {
      const cpuOk = (best.serverCpuUs ?? Infinity) <= SERVER_CPU_GOAL_US;
      goals.push({
        section: "1",
        goal: `server CPU per call ≤ ${SERVER_CPU_GOAL_US} µs, best networked mode (Go: 200–430 µs*) (${workload})`,
        measured: `${sig(best.serverCpuUs)} µs (${best.label})`,
        met: cpuOk,
      });
      const ghz = rows.find((r) => r.workload === workload && r.mode === GHZ_MODE);
      if (ghz) {
        goals.push({
          section: "1",
          goal: `gRPC h2c from ghz: p50 ≤ ${NET_P50_GOAL_US} µs, p99 ≤ ${NET_P99_GOAL_US} µs, server CPU ≤ ${SERVER_CPU_GOAL_US} µs/call (${workload})`,
          measured: `p50 ${sig(ghz.latency.p50)} µs, p99 ${sig(ghz.latency.p99)} µs, ${sig(ghz.serverCpuUs)} µs CPU`,
          met: (ghz.latency.p50 ?? Infinity) <= NET_P50_GOAL_US && (ghz.latency.p99 ?? Infinity) <= NET_P99_GOAL_US && (ghz.serverCpuUs ?? Infinity) <= SERVER_CPU_GOAL_US,
        });
      }
    }
  }

  const table = {
    headers: ["Workload", "Mode", "Samples", "p50 µs", "p99 µs", "p99.9 µs", "p50 ÷ bare", "Server CPU µs/call", "Goal", "Met"],
    align: ["l", "l", "r", "r", "r", "r", "r", "r", "l", "l"] as const,
    rows: rows.map((r) => {
      const g = goalOf.get(r);
      return [
        r.workload === "trivial" ? "trivial (stand-in)" : "worldgen (easy seed)",
        r.label,
        count(r.latency.samples),
        sig(r.latency.p50),
        sig(r.latency.p99),
        sig(r.latency.p999),
        r.mode === "bare" ? "1×" : ratio(r.latency.p50, rows.find((b) => b.workload === r.workload && b.mode === "bare")!.latency.p50),
        r.serverCpuUs === undefined ? "" : sig(r.serverCpuUs),
        g?.[0] ?? "",
        g ? metText(g[1]) : "",
      ];
    }),
  };
  const timerNs = timer.summary().p50;
  return {
    id: "calls",
    title: "1. Call modes (closed loop, one call at a time; µs)",
    table,
    notes: [
      `Networked modes: the server is a separate process on loopback (real host, real runtime, token verified per call); the client runs in this process.`,
      `Bare = \`await impl.generateWorld(req, ctx)\`. Timer overhead per sample ≈ ${sig(timerNs)} ns (in every row).`,
      `Server CPU µs/call: the server process's CPU time (user + system, kernel included) over the measured calls ÷ calls; goal ≤ ${SERVER_CPU_GOAL_US} µs (Go: 200–430 µs, quoted). ` +
        `ghz (grpc-go, ${existsSync(GHZ) ? ".tools/bin/ghz" : "not installed: pnpm run setup:ghz"}) calls the same server over gRPC h2c, one call at a time on one connection, ${count(budgets.net.count)} calls after ${count(budgets.net.warm)} warm-up calls; its latency is its own per-call timing.`,
      `Paced rows: the same call once per ${PACED_GAP_MS} ms (a game's tick), ${PACED.full} calls, from this client and from ghz (\`--rps\`): between calls both processes sleep, and waking them (the kernel, the virtual CPUs) adds to every call what a closed loop never sees. That, not the call path, is most of what a study measures per RPC on an otherwise idle machine (docs/measurements/2026-11-28-bench-where-the-time-goes.md, "Calls at a game's pace").`,
      `* p99 660–924 µs is the reference for FlappyGo's Go implementation (gRPC over TLS) on this machine type, quoted from the project's goals, not measured in this run.`,
    ],
    goals,
    data: { rows, timerOverheadNs: timerNs },
    seconds: (performance.now() - started) / 1000,
  };
}
