// Section 2: open-loop load per networked mode, stepped up until the p99 (from the intended send
// time) exceeds 10× its low-load value or the step cannot keep up.
import { setMaxListeners } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createRuntime } from "@flaplab/runtime";
import { worldgenComponent } from "@flaplab/worldgen";
import { type Child, startChild } from "./child.js";
import { type OpenLoopResult, runOpenLoop } from "./openloop.js";
import { benchKeys, benchRequest, clientTopology, DEFAULT_NETWORK_MODE, NETWORK_MODES } from "./rpc-fixture.js";
import type { CpuSample, RpcServerPorts } from "./rpc-server.js";
import { existsSync } from "node:fs";
import { Hist, type Percentiles } from "./hist.js";
import { GHZ, runGhz } from "./overload.js";
import type { RunOptions, SectionResult } from "./section.js";
import { count, ratio, sig } from "./table.js";

export interface LoadStep extends OpenLoopResult {
  /** Server process CPU time ÷ wall time during the step (1 = one core busy). */
  readonly serverCpu: number;
  readonly pass: boolean;
  readonly why: string;
}

export interface LoadRow {
  readonly mode: string;
  readonly label: string;
  readonly lowLoadP99Us: number | null;
  readonly steps: readonly LoadStep[];
  /** Highest rate whose step stayed under the threshold (0: none). */
  readonly sustainableRps: number;
  /** Sustainable rate ÷ the server's CPU use at it: requests per second per fully used core. */
  readonly rpsPerServerCore: number | null;
}

export const P99_FACTOR = 10;

/** ghz (grpc-go) against the same endpoint, gRPC over h2c on one connection. */
export interface GhzLoadRow {
  readonly label: string;
  /** Offered rate (open loop), or null (closed loop). */
  readonly offeredRps: number | null;
  readonly achievedRps: number;
  readonly ok: number;
  readonly errors: number;
  /** ghz's own per-call latency, µs. */
  readonly latency: Percentiles;
  readonly serverCpu: number;
}

const FULL = {
  rates: [250, 500, 1000, 2000, 4000, 8000, 16000],
  firstStepMs: 4000,
  stepMs: 2000,
  drainMs: 2000,
  warm: 500,
  ghzClosed: { concurrency: 32, calls: 10_000 },
  ghzOpen: { rps: 1000, ms: 4000 },
};
const QUICK = {
  rates: [200, 400],
  firstStepMs: 200,
  stepMs: 200,
  drainMs: 300,
  warm: 20,
  ghzClosed: { concurrency: 8, calls: 200 },
  ghzOpen: { rps: 200, ms: 500 },
};

export async function runLoad(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const plan = opts.quick ? QUICK : FULL;
  const dir = await mkdtemp(join(opts.workDir, "load-"));
  const keys = await benchKeys(dir);
  const token = await keys.callerToken();
  const callOptions = { headers: { authorization: `Bearer ${token}` } };
  const request = benchRequest();
  const rows: LoadRow[] = [];
  const ghzRows: GhzLoadRow[] = [];
  // Hundreds of calls in flight on one HTTP/2 session each listen to the session's abort signal.
  setMaxListeners(2048);
  let server: Child | undefined;
  try {
    server = await startChild("rpc-server.ts");
    const ports = await server.request<RpcServerPorts>({ type: "start", keysDir: dir });
    const cpu = () => server!.request<CpuSample>({ type: "cpu" });
    for (const mode of NETWORK_MODES) {
      const runtime = createRuntime({ topology: clientTopology(ports.trivial, mode.network), group: "bench", verifier: keys.verifier });
      const client = runtime.client(worldgenComponent, "bench");
      const call = () => client.generateWorld(request, callOptions);
      for (let i = 0; i < plan.warm; i++) await call();
      const steps: LoadStep[] = [];
      let lowLoadP99: number | null = null;
      for (const rate of plan.rates) {
        const before = await cpu();
        // The first step is the low-load reference: it runs longer, for a steadier p99.
        const durationMs = steps.length === 0 ? plan.firstStepMs : plan.stepMs;
        const r = await runOpenLoop({ rate, durationMs, drainMs: plan.drainMs, maxInFlight: 256, call });
        const after = await cpu();
        const serverCpu = (after.cpuUs - before.cpuUs) / Math.max(1, after.wallUs - before.wallUs);
        const reasons: string[] = [];
        if (r.errors > 0) reasons.push(`${r.errors} errors`);
        if (r.abandoned > 0) reasons.push(`${r.abandoned} unanswered`);
        if (steps.length > 0 && (r.latency.p99 ?? Infinity) > P99_FACTOR * (lowLoadP99 ?? 0)) {
          reasons.push(`p99 ${sig((r.latency.p99 ?? 0) / 1000)} ms > ${P99_FACTOR}× low-load`);
        }
        const step: LoadStep = { ...r, serverCpu, pass: reasons.length === 0, why: reasons.join(", ") };
        steps.push(step);
        // Low load = the smallest p99 of the steps so far (one noisy step must not set the bar).
        if (r.latency.p99 !== null) lowLoadP99 = lowLoadP99 === null ? r.latency.p99 : Math.min(lowLoadP99, r.latency.p99);
        opts.log(
          `  load ${mode.id} ${rate} rps: p50 ${sig(r.latency.p50)} µs p99 ${sig(r.latency.p99)} µs (uncorrected p99 ${sig(r.uncorrected.p99)}), ` +
            `server CPU ${Math.round(serverCpu * 100)}%${step.pass ? "" : ` — over: ${step.why}`}`,
        );
        if (!step.pass) break;
      }
      runtime.close();
      const sustained = [...steps].reverse().find((s) => s.pass);
      rows.push({
        mode: mode.id,
        label: mode.label,
        lowLoadP99Us: lowLoadP99,
        steps,
        sustainableRps: sustained?.rate ?? 0,
        rpsPerServerCore: sustained && sustained.serverCpu > 0 ? sustained.rate / sustained.serverCpu : null,
      });
    }
    if (existsSync(GHZ)) {
      const address = `127.0.0.1:${ports.trivial}`;
      await runGhz(["--concurrency=1", "-n", String(plan.warm)], address, token, 1000);
      const ghzRun = async (label: string, args: string[], offeredRps: number | null, ms: number) => {
        const before = await cpu();
        const report = await runGhz(args, address, token, ms);
        const after = await cpu();
        const h = new Hist();
        let ok = 0;
        for (const d of report.details ?? []) {
          if (d.status === "OK") {
            ok++;
            h.record(d.latency / 1000); // ns → µs
          }
        }
        const row: GhzLoadRow = {
          label,
          offeredRps,
          achievedRps: report.rps,
          ok,
          errors: report.count - ok,
          latency: h.summary(),
          serverCpu: (after.cpuUs - before.cpuUs) / Math.max(1, after.wallUs - before.wallUs),
        };
        ghzRows.push(row);
        opts.log(`  load ${label}: ${Math.round(row.achievedRps)} rps, p50 ${sig(row.latency.p50)} µs p99 ${sig(row.latency.p99)} µs, server CPU ${Math.round(row.serverCpu * 100)}%`);
      };
      const { concurrency, calls } = plan.ghzClosed;
      await ghzRun(`ghz (grpc-go), gRPC h2c, closed loop, ${concurrency} in flight`, [`--concurrency=${concurrency}`, "-n", String(calls)], null, 30_000);
      const { rps, ms } = plan.ghzOpen;
      await ghzRun(`ghz (grpc-go), gRPC h2c, open loop`, ["--async", `--rps=${rps}`, "-n", String(Math.round((rps * ms) / 1000))], rps, ms);
    }
  } finally {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const own = rows.find((r) => r.mode === "grpc-h2c")?.steps.find((x) => x.rate === plan.ghzOpen.rps);
  const ghzOpen = ghzRows.find((r) => r.offeredRps !== null);
  const base = rows.find((r) => r.mode === DEFAULT_NETWORK_MODE)!;
  const lastRate = plan.rates[plan.rates.length - 1]!;
  return {
    id: "load",
    title: "2. Open-loop load (fixed arrival rate, latency from the intended send time; µs)",
    table: {
      headers: [
        "Mode",
        "Rates tried (rps)",
        "Sustainable rps",
        "Samples",
        "p50 µs",
        "p99 µs",
        "Low-load p99 µs",
        "Server CPU",
        "rps per server core",
        "vs Connect binary h1",
        "First step over",
      ],
      align: ["l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "l"],
      rows: rows.map((r) => {
        const s = r.steps.find((x) => x.rate === r.sustainableRps);
        const over = r.steps.find((x) => !x.pass);
        return [
          r.label,
          r.steps.map((x) => x.rate).join(", "),
          r.sustainableRps === 0 ? `< ${plan.rates[0]}` : `${count(r.sustainableRps)}${r.sustainableRps === lastRate ? "+" : ""}`,
          s ? count(s.completed) : "–",
          sig(s?.latency.p50),
          sig(s?.latency.p99),
          sig(r.lowLoadP99Us),
          s ? `${Math.round(s.serverCpu * 100)}%` : "–",
          r.rpsPerServerCore === null ? "–" : count(r.rpsPerServerCore),
          ratio(r.sustainableRps, base.sustainableRps),
          over ? `${count(over.rate)}: ${over.why} (uncorrected p99 ${sig(over.uncorrected.p99)})` : "none",
        ];
      }).concat(
        ghzRows.map((g) => [
          g.label,
          g.offeredRps === null ? "closed loop" : String(g.offeredRps),
          g.offeredRps === null ? `${count(Math.round(g.achievedRps))} (achieved)` : `${count(Math.round(g.achievedRps))} achieved`,
          count(g.ok),
          sig(g.latency.p50),
          sig(g.latency.p99),
          "–",
          `${Math.round(g.serverCpu * 100)}%`,
          g.serverCpu > 0 ? count(Math.round(g.achievedRps / g.serverCpu)) : "–",
          g.offeredRps === null ? ratio(g.achievedRps, base.sustainableRps) : "–",
          g.errors > 0 ? `${count(g.errors)} errors` : "none",
        ]),
      ),
    },
    notes: [
      `Stand-in GenerateWorld; server in a separate process (one Node process = at most one core), client in this process; both share the ${"machine's"} cores.`,
      `Each step issues rate × ${plan.stepMs / 1000} s requests on schedule (${plan.firstStepMs / 1000} s for the first; ≤ 256 in flight); a step fails on p99 > ${P99_FACTOR}× the low-load p99 (the smallest p99 of the lower rates), on errors, or when requests are still unanswered ${plan.drainMs / 1000} s after the last was due. Sustainable = the last passing rate ("+" = the highest rate tried).`,
      `rps per server core = sustainable rate ÷ the server's CPU use at it. "uncorrected p99" is what timing from the actual send would have shown.`,
      existsSync(GHZ)
        ? `ghz rows: ghz v0.121.0 (grpc-go) against the same server and stand-in, gRPC over h2c on one connection; closed loop = ${plan.ghzClosed.concurrency} calls in flight, ${count(plan.ghzClosed.calls)} calls (rps per server core = achieved rate ÷ server CPU); open loop = \`--async --rps ${plan.ghzOpen.rps}\` for ${plan.ghzOpen.ms / 1000} s. ghz times each call from its actual send (not the intended one).` +
          (own && ghzOpen
            ? ` This client's gRPC h2c step at the same rate: p50 ${sig(own.latency.p50)} µs, p99 ${sig(own.latency.p99)} µs (uncorrected ${sig(own.uncorrected.p50)} / ${sig(own.uncorrected.p99)} µs) against ghz's ${sig(ghzOpen.latency.p50)} / ${sig(ghzOpen.latency.p99)} µs (p50 ratio ${ratio(own.uncorrected.p50, ghzOpen.latency.p50)}); server CPU ${Math.round(own.serverCpu * 100)}% against ${Math.round(ghzOpen.serverCpu * 100)}%.`
            : "")
        : `ghz not installed (${GHZ}): run pnpm run setup:ghz for the ghz rows.`,
    ],
    goals: [],
    data: { rows, ghzRows, plan },
    seconds: (performance.now() - started) / 1000,
  };
}
