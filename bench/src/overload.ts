// Section 6: overload. An open-loop flood of real GenerateWorld calls at twice the capacity on ONE
// h2c connection, from this process's Connect gRPC client and from ghz (grpc-go) when
// `pnpm run setup:ghz` installed it. The host must answer every call with OK or a proper
// resource_exhausted / unavailable status (no HTTP/2 resets, no GOAWAY), keep its memory bounded
// and answer /healthz afterwards.
import { setMaxListeners } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { GHZ, type GhzReport, ghzGenerateWorld } from "@flaplab/testkit/ghz";
import { type Child, startChild } from "./child.js";
import { Hist, type Percentiles } from "./hist.js";
import { runOpenLoop } from "./openloop.js";
import { EASY_SEED } from "./seed.js";
import { benchKeys, benchRequest } from "./rpc-fixture.js";
import type { RpcServerPorts } from "./rpc-server.js";
import type { RunOptions, SectionResult } from "./section.js";
import { count, sig } from "./table.js";

export { GHZ };

const FULL = { capacityMs: 2000, capacityCalls: 3000, loadMs: 10_000, factor: 2 };
const QUICK = { capacityMs: 300, capacityCalls: 300, loadMs: 500, factor: 2 };

export interface OverloadRow {
  readonly client: string;
  readonly offeredRps: number;
  readonly calls: number;
  readonly ok: number;
  /** Errors per gRPC code name that a host sheds with (ResourceExhausted, Unavailable). */
  readonly shed: Readonly<Record<string, number>>;
  /** Any other error, by its message. */
  readonly other: Readonly<Record<string, number>>;
  /** Latency of the OK calls, µs (from the intended send time for this process's client; ghz's own timing otherwise). */
  readonly okLatency: Percentiles;
  readonly rssBeforeMb: number;
  readonly rssPeakMb: number;
  readonly healthyAfter: boolean;
  /**
   * The client process's CPU over the run, in cores (user + system; Node's helper threads count),
   * for this process's client; undefined for ghz (another process, not measured).
   */
  readonly clientCores?: number | undefined;
}

/**
 * A client busier than this (cores) cannot read its answers as they come: Node's http2 server then
 * protects itself from the unread streams (RST_STREAM ENHANCE_YOUR_CALM / REFUSED_STREAM, GOAWAY),
 * which says nothing about how the host sheds calls. Such a row is shown but not judged.
 */
const SATURATED_CLIENT_CORES = 0.9;

const SHED_CODES = new Set(["ResourceExhausted", "Unavailable"]);

export async function runOverload(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const plan = opts.quick ? QUICK : FULL;
  const dir = await mkdtemp(join(opts.workDir, "overload-"));
  const keys = await benchKeys(dir);
  const token = await keys.callerToken();
  const headers = { authorization: `Bearer ${token}` };
  const request = benchRequest();
  const rows: OverloadRow[] = [];
  const haveGhz = existsSync(GHZ);
  // Thousands of calls in flight on one HTTP/2 session each listen to the session's abort signal.
  setMaxListeners(16_384);
  let capacity = { rps: 0, by: "" };
  let server: Child | undefined;
  try {
    server = await startChild("rpc-server.ts");
    const ports = await server.request<RpcServerPorts>({ type: "start", keysDir: dir });
    const address = `127.0.0.1:${ports.worldgen}`;
    const baseUrl = `http://${address}`;
    const pid = server.pid;
    const ghz = (args: readonly string[]) => runGhz(args, address, token, plan.loadMs);
    // Capacity: closed loop, 32 calls in flight on the one connection, with the strongest client at hand.
    if (haveGhz) {
      const r = await ghz(["--concurrency=32", "-n", String(plan.capacityCalls)]);
      capacity = { rps: r.rps, by: `ghz, closed loop, 32 in flight, ${count(plan.capacityCalls)} calls` };
    } else {
      capacity = { rps: await closedLoop(baseUrl, headers, plan.capacityMs), by: `Connect gRPC client, closed loop, 32 in flight, ${plan.capacityMs / 1000} s` };
    }
    const rate = Math.max(100, Math.round(plan.factor * capacity.rps));
    opts.log(`  overload: capacity ${Math.round(capacity.rps)} rps (${capacity.by}); offering ${rate} rps`);

    // This process's client: Connect's gRPC transport, one h2c session.
    {
      const client = createClient(WorldGenService, createGrpcTransport({ baseUrl }));
      const shed: Record<string, number> = {};
      const other: Record<string, number> = {};
      const okHist = new Hist();
      const rssBefore = await rssMb(pid);
      const rss = watchRss(pid);
      const cpuBefore = process.cpuUsage();
      const wallBefore = performance.now();
      const r = await runOpenLoop({
        rate,
        durationMs: plan.loadMs,
        maxInFlight: 8192,
        drainMs: 30_000,
        call: () =>
          client.generateWorld(request, { headers, timeoutMs: 30_000 }).catch((err: unknown) => {
            const e = ConnectError.from(err);
            const name = Code[e.code];
            if (SHED_CODES.has(name)) shed[name] = (shed[name] ?? 0) + 1;
            else other[`${name}: ${e.rawMessage}`] = (other[`${name}: ${e.rawMessage}`] ?? 0) + 1;
            throw err;
          }),
        onSample: (_i, intended, _sent, done, ok) => {
          if (ok) okHist.record((done - intended) * 1000);
        },
      });
      const cpu = process.cpuUsage(cpuBefore);
      const clientCores = (cpu.user + cpu.system) / 1000 / (performance.now() - wallBefore);
      const rssPeak = await rss.stop();
      rows.push({
        client: "Connect gRPC client (Node, this process)",
        clientCores,
        offeredRps: r.scheduled / (plan.loadMs / 1000),
        calls: r.completed + r.abandoned,
        ok: r.completed - r.errors,
        shed,
        other: r.abandoned > 0 ? { ...other, unanswered: r.abandoned } : other,
        okLatency: okHist.summary(),
        rssBeforeMb: rssBefore,
        rssPeakMb: rssPeak,
        healthyAfter: await healthy(baseUrl),
      });
    }
    if (haveGhz) {
      const rssBefore = await rssMb(pid);
      const rss = watchRss(pid);
      const r = await ghz(["--async", `--rps=${rate}`, "-n", String(Math.round((rate * plan.loadMs) / 1000))]);
      const rssPeak = await rss.stop();
      const shed: Record<string, number> = {};
      const other: Record<string, number> = {};
      const okHist = new Hist();
      for (const d of r.details ?? []) {
        if (d.status === "OK") okHist.record(d.latency / 1000);
        else if (SHED_CODES.has(d.status)) shed[d.status] = (shed[d.status] ?? 0) + 1;
        else other[d.error || d.status] = (other[d.error || d.status] ?? 0) + 1;
      }
      rows.push({
        client: "ghz v0.121.0 (grpc-go), --async",
        offeredRps: rate,
        calls: r.count,
        ok: r.statusCodeDistribution?.["OK"] ?? 0,
        shed,
        other,
        okLatency: okHist.summary(),
        rssBeforeMb: rssBefore,
        rssPeakMb: rssPeak,
        healthyAfter: await healthy(baseUrl),
      });
    }
  } finally {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const judged = rows.filter((r) => r.clientCores === undefined || r.clientCores < SATURATED_CLIENT_CORES);
  const clean = judged.length > 0 && judged.every((r) => Object.keys(r.other).length === 0 && r.healthyAfter && r.ok > 0);
  const saturated = rows.filter((r) => !judged.includes(r));
  const fmtShed = (s: Readonly<Record<string, number>>) =>
    Object.keys(s).length === 0 ? "0" : Object.entries(s).map(([k, v]) => `${k} ${count(v)}`).join(", ");
  const fmtOther = (s: Readonly<Record<string, number>>) =>
    Object.keys(s).length === 0 ? "0" : Object.entries(s).map(([k, v]) => `${count(v)} × ${k.slice(0, 80)}`).join("; ");
  return {
    id: "overload",
    title: "6. Overload (open loop at 2× capacity, one h2c connection, real GenerateWorld)",
    table: {
      headers: ["Client", "Client CPU (cores)", "Offered rps", "Calls", "OK", "Shed by code", "Other errors", "OK p50 ms", "OK p99 ms", "Server RSS before → peak (MB)", "/healthz after"],
      align: ["l", "r", "r", "r", "r", "l", "l", "r", "r", "r", "l"],
      rows: rows.map((r) => [
        r.client,
        r.clientCores === undefined ? "–" : r.clientCores.toFixed(2),
        count(r.offeredRps),
        count(r.calls),
        count(r.ok),
        fmtShed(r.shed),
        fmtOther(r.other),
        sig(r.okLatency.p50 === null ? null : r.okLatency.p50 / 1000),
        sig(r.okLatency.p99 === null ? null : r.okLatency.p99 / 1000),
        `${Math.round(r.rssBeforeMb)} → ${Math.round(r.rssPeakMb)}`,
        r.healthyAfter ? "ok" : "FAILED",
      ]),
    },
    notes: [
      `Capacity ${count(capacity.rps)} rps (${capacity.by}); offered ${plan.factor}× for ${plan.loadMs / 1000} s. The server is the bench's worldgen host (real createWorldGen, default host limits) in its own process; RSS sampled from /proc every 50 ms.`,
      `OK latency: from the intended send time for this process's client (coordinated omission corrected), ghz's own per-call latency for ghz. Shed calls come back at once; OK calls wait in the host's bounded queue.`,
      haveGhz ? "ghz: .tools/bin/ghz." : `ghz not installed (${GHZ}): run pnpm run setup:ghz for the grpc-go row.`,
      `The goal is judged on the rows whose client kept up (client CPU < ${SATURATED_CLIENT_CORES} cores; ghz's is not measured): a client that cannot read its answers as they come gets its streams reset by Node's http2 server (ENHANCE_YOUR_CALM, REFUSED_STREAM, then GOAWAY), its protection against unread streams, whatever the host's shedding does.` +
        (saturated.length > 0 ? ` Not judged this run: ${saturated.map((r) => `${r.client} (${r.clientCores?.toFixed(2)} cores)`).join(", ")}.` : ""),
    ],
    goals: [
      {
        section: "6",
        goal: "flood at 2× capacity on one h2c connection: only OK and resource_exhausted/unavailable, healthy after",
        measured: judged.map((r) => `${r.client.split(" ")[0]}: ${count(r.ok)} OK, ${fmtShed(r.shed)}, other ${fmtOther(r.other)}, RSS peak ${Math.round(r.rssPeakMb)} MB`).join("; "),
        met: opts.quick ? null : clean,
      },
    ],
    data: { capacity, rate: rows[0]?.offeredRps, rows, plan },
    seconds: (performance.now() - started) / 1000,
  };
}

async function closedLoop(baseUrl: string, headers: Record<string, string>, ms: number): Promise<number> {
  const client = createClient(WorldGenService, createGrpcTransport({ baseUrl }));
  const request = benchRequest();
  for (let i = 0; i < 20; i++) await client.generateWorld(request, { headers });
  let done = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < end) {
        await client.generateWorld(request, { headers });
        done++;
      }
    }),
  );
  return done / (ms / 1000);
}

/** The latencies (ns) of a ghz run's calls that answered OK. */
export function okLatencies(report: GhzReport): Hist {
  const h = new Hist();
  for (const d of report.details ?? []) if (d.status === "OK") h.record(d.latency);
  return h;
}

export async function runGhz(args: readonly string[], address: string, token: string, loadMs: number): Promise<GhzReport> {
  return ghzGenerateWorld({ address, token, args, gameId: "bench-game", seed: EASY_SEED, timeoutMs: loadMs + 90_000 });
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Samples a process's RSS every 50 ms until stopped; resolves with the peak (MB). */
function watchRss(pid: number): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, await rssMb(pid));
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return Math.max(peak, await rssMb(pid));
    },
  };
}

async function healthy(baseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

