// Attack 12: an open-loop flood of GenerateWorld calls on ONE h2c connection at twice what the
// server can serve. Every call must end in a proper gRPC status: OK, or resource_exhausted from
// the host's admission control (never an HTTP/2 RST_STREAM, ENHANCE_YOUR_CALM or GOAWAY); the
// server's memory stays bounded and it answers /healthz afterwards. The server runs in its own
// process (as in production, and so that its RSS can be measured); the load comes from this
// process with Connect's gRPC client, and again from ghz when `pnpm run setup:ghz` installed it.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { SHED_MESSAGE } from "@flaplab/host";
import { openLocalIdentity } from "@flaplab/identity";
import { GHZ, ghzGenerateWorld } from "@flaplab/testkit/ghz";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, topologyOnFreePorts } from "../helpers.js";

const LOAD_MS = 4000;
/** Largest growth of the server's RSS during a flood over its RSS before it. */
const MAX_RSS_GROWTH_MB = 300;
const SEED = 6977347407732442987n;

let child: ChildProcess;
let dir: string;
let baseUrl: string;
let token: string;
let capacityRps = 0;

beforeAll(async () => {
  const topo = await topologyOnFreePorts("monolith");
  dir = topo.dir;
  baseUrl = `http://${topo.addresses["monolith"]}`;
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("FLAPLAB_")) delete env[k];
  child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--topology", topo.file, "--data-dir", join(dir, "data")], {
    cwd: resolve(REPO, "apps/server"),
    stdio: ["ignore", "ignore", "inherit"],
    env,
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (await healthy()) break;
    if (Date.now() > deadline) throw new Error("server did not answer /healthz within 60 s");
    await sleep(200);
  }
  // A component credential (initiator acting for a player): GenerateWorld is internal.
  token = await (await openLocalIdentity(join(dir, "data"))).serviceSigner.tokenFor("initiator", "worldgen", "flood");
  capacityRps = await measureCapacity();
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function healthy(): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
    return res.status === 200 && ((await res.json()) as { status?: string }).status === "ok";
  } catch {
    return false;
  }
}

async function rssMb(): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Samples the server's RSS every 50 ms until stopped; returns the peak. */
function watchRss(): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, await rssMb());
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return Math.max(peak, await rssMb());
    },
  };
}

function client() {
  // One transport: one h2c session for every call.
  return createClient(WorldGenService, createGrpcTransport({ baseUrl }));
}

const request = { gameId: "flood", viewport: { width: 480, height: 640 }, seed: SEED };

/** Calls per second the server completes with 32 calls always in flight (closed loop, 1.5 s). */
async function measureCapacity(): Promise<number> {
  const c = client();
  const headers = { authorization: `Bearer ${token}` };
  for (let i = 0; i < 50; i++) await c.generateWorld(request, { headers });
  let done = 0;
  const end = performance.now() + 1500;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < end) {
        await c.generateWorld(request, { headers });
        done++;
      }
    }),
  );
  return done / 1.5;
}

interface Outcome {
  ok: number;
  shed: number;
  other: Map<string, number>;
  offered: number;
}

/** Open loop: `rate` calls per second for LOAD_MS on one h2c session, whatever the answers. */
async function flood(rate: number): Promise<Outcome> {
  const c = client();
  const headers = { authorization: `Bearer ${token}` };
  const out: Outcome = { ok: 0, shed: 0, other: new Map(), offered: 0 };
  const total = Math.round((rate * LOAD_MS) / 1000);
  const calls: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; ) {
    const due = t0 + (i * 1000) / rate;
    const now = performance.now();
    if (now < due) {
      await sleep(Math.min(5, due - now));
      continue;
    }
    // Every call due by now (bounded: at most `total`).
    for (; i < total && t0 + (i * 1000) / rate <= now; i++) {
      calls.push(
        c.generateWorld(request, { headers, timeoutMs: 30_000 }).then(
          () => void out.ok++,
          (err: unknown) => {
            const e = ConnectError.from(err);
            if (e.code === Code.ResourceExhausted && e.rawMessage === SHED_MESSAGE) out.shed++;
            else {
              const key = `${Code[e.code]}: ${e.rawMessage}`;
              out.other.set(key, (out.other.get(key) ?? 0) + 1);
            }
          },
        ),
      );
    }
  }
  out.offered = total / ((performance.now() - t0) / 1000);
  await Promise.all(calls);
  return out;
}

/** One ghz run of GenerateWorld on one connection. */
const ghz = (args: readonly string[]) => ghzGenerateWorld({ address: baseUrl.replace("http://", ""), token, args, gameId: "flood", seed: SEED, timeoutMs: 90_000 });

describe("a flood on one h2c connection is shed with resource_exhausted", () => {
  it("Connect's gRPC client, open loop at twice the capacity: only OK and resource_exhausted, bounded RSS, healthy after", async () => {
    const rate = Math.max(400, Math.round(2 * capacityRps));
    const before = await rssMb();
    const rss = watchRss();
    const out = await flood(rate);
    const peak = await rss.stop();
    console.log(
      `[flood] capacity ${capacityRps.toFixed(0)} rps; offered ${out.offered.toFixed(0)} rps (target ${rate}) for ${LOAD_MS} ms: ` +
        `ok ${out.ok}, shed ${out.shed}, other ${JSON.stringify(Object.fromEntries(out.other))}; RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB`,
    );
    expect(Object.fromEntries(out.other)).toEqual({});
    expect(out.ok).toBeGreaterThan(0);
    expect(peak - before).toBeLessThan(MAX_RSS_GROWTH_MB);
    expect(await healthy()).toBe(true);
    // And a call right after is served.
    expect((await client().generateWorld(request, { headers: { authorization: `Bearer ${token}` } })).world?.seed).toBe(SEED);
  });

  it.skipIf(!existsSync(GHZ))("ghz (grpc-go), open loop at twice the capacity: only OK and resource_exhausted, bounded RSS, healthy after", async () => {
    // ghz drives the server harder than Connect's client in this process: measure the capacity
    // with ghz itself (closed loop, 32 calls in flight on the one connection).
    const closed = await ghz(["--concurrency=32", "-n", "1500"]);
    const rate = Math.max(400, Math.round(2 * closed.rps));
    const before = await rssMb();
    const rss = watchRss();
    const report = await ghz(["--async", `--rps=${rate}`, "-n", String(Math.round((rate * LOAD_MS) / 1000))]);
    const peak = await rss.stop();
    console.log(
      `[flood/ghz] capacity ${closed.rps.toFixed(0)} rps; offered ${rate} rps: ${report.count} calls, ${JSON.stringify(report.statusCodeDistribution)}; ` +
        `RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB`,
    );
    const errors = Object.keys(report.errorDistribution ?? {});
    expect(errors.filter((e) => !e.includes(`code = ResourceExhausted desc = ${SHED_MESSAGE}`))).toEqual([]);
    expect(report.statusCodeDistribution?.["OK"] ?? 0).toBeGreaterThan(0);
    expect(peak - before).toBeLessThan(MAX_RSS_GROWTH_MB);
    expect(await healthy()).toBe(true);
  });

  it.runIf(!existsSync(GHZ))("ghz variant skipped: ghz is not installed (pnpm run setup:ghz)", () => {
    console.log(`[flood/ghz] skipped: ${GHZ} not found; install it with pnpm run setup:ghz`);
  });
});
