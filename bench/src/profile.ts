// CPU profiles of the paths whose goals a run can miss, summarized by package and function.
// Usage: tsx src/profile.ts <network|streams|engine> [--mode connect-proto-h1] [--link websocket] [--games 2000] [--keep <dir>]
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createRuntime } from "@flaplab/runtime";
import { worldgenComponent } from "@flaplab/worldgen";
import { startChild } from "./child.js";
import type { StepResult } from "./engine-harness.js";
import { startProfile, stopProfile } from "./inspector-profile.js";
import { summarizeProfile } from "./profile-summary.js";
import { benchKeys, benchRequest, clientTopology, NETWORK_MODES } from "./rpc-fixture.js";
import type { RpcServerPorts } from "./rpc-server.js";
import type { StreamLink } from "./stream-clients.js";
import type { StreamGame, StreamServerInfo, StreamServerStats } from "./stream-server.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function print(title: string, file: string, top = 20): Promise<void> {
  const s = summarizeProfile(JSON.parse(await readFile(file, "utf8")), top);
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`\n== ${title}: ${s.totalMs.toFixed(0)} ms sampled (${file})\n-- self time by package\n`);
  for (const l of s.byPlace.slice(0, 12)) process.stdout.write(`${pct(l.share)} ${l.selfMs.toFixed(0).padStart(7)} ms  ${l.name}\n`);
  process.stdout.write(`-- self time by function\n`);
  for (const l of s.byFunction) process.stdout.write(`${pct(l.share)} ${l.selfMs.toFixed(0).padStart(7)} ms  ${l.name}\n`);
}

async function network(dir: string, modeId: string, calls: number): Promise<void> {
  const mode = NETWORK_MODES.find((m) => m.id === modeId);
  if (!mode) throw new Error(`unknown mode ${modeId} (modes: ${NETWORK_MODES.map((m) => m.id).join(", ")})`);
  const keys = await benchKeys(dir);
  const token = await keys.callerToken();
  const server = await startChild("rpc-server.ts");
  try {
    const ports = await server.request<RpcServerPorts>({ type: "start", keysDir: dir });
    const runtime = createRuntime({ topology: clientTopology(ports.trivial, mode.network), group: "bench", verifier: keys.verifier });
    const client = runtime.client(worldgenComponent, "bench");
    const request = benchRequest();
    const options = { headers: { authorization: `Bearer ${token}` } };
    for (let i = 0; i < 2000; i++) await client.generateWorld(request, options);
    await server.request({ type: "profile-start" });
    await startProfile();
    const t = performance.now();
    for (let i = 0; i < calls; i++) await client.generateWorld(request, options);
    const us = ((performance.now() - t) * 1000) / calls;
    await stopProfile(join(dir, "client.cpuprofile"));
    await server.request({ type: "profile-stop", file: join(dir, "server.cpuprofile") });
    runtime.close();
    process.stdout.write(`${calls} sequential ${mode.label} calls: ${us.toFixed(0)} µs each (profiled)\n`);
    await print("client (this process)", join(dir, "client.cpuprofile"));
    await print("server process", join(dir, "server.cpuprofile"));
  } finally {
    await server.stop();
  }
}

async function streams(dir: string, games: number, link: StreamLink): Promise<void> {
  const server = await startChild("stream-server.ts", ENGINE_NODE_FLAGS);
  const clients = await startChild("stream-clients.ts");
  try {
    const info = await server.request<StreamServerInfo>({ type: "start", keysDir: dir });
    const made = await server.request<StreamGame[]>({ type: "games", count: games, prefix: "p" });
    const url = link === "websocket" ? info.wsUrl : info.url;
    await clients.request({ type: "open", link, url, certSha256: info.certSha256, games: made, concurrency: 16 }, 180_000);
    await clients.request({ type: "start", rampMs: 1000 });
    await sleep(1500);
    await server.request({ type: "reset", profile: true });
    await sleep(4000);
    const file = join(dir, "stream-server.cpuprofile");
    const s = await server.request<StreamServerStats>({ type: "stats", profileFile: file });
    process.stdout.write(`${games} games over ${link}: ${s.ticks} frames in ${(s.wallMs / 1000).toFixed(1)} s, ${(s.cpuUs / Math.max(1, s.ticks)).toFixed(0)} µs server CPU per frame (profiled)\n`);
    await print("stream server process", file);
    await clients.request({ type: "close" });
  } finally {
    await clients.stop();
    await server.stop();
  }
}

async function engine(dir: string, games: number): Promise<void> {
  const child = await startChild("engine-child.ts", ["--expose-gc", ...ENGINE_NODE_FLAGS]);
  try {
    const file = join(dir, "engine.cpuprofile");
    const r = await child.request<StepResult>({ type: "step", games, rampMs: 1000, settleMs: 500, measureMs: 4000, profileFile: file });
    process.stdout.write(`${games} games in memory: ${r.frames} frames, ${r.cpuPerFrameUs.toFixed(1)} µs CPU/frame, lateness p99 ${r.lateness.p99} µs (profiled)\n`);
    await print("engine process", file);
  } finally {
    await child.stop();
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { mode: { type: "string", default: "connect-proto-h1" }, link: { type: "string", default: "webtransport" }, games: { type: "string" }, calls: { type: "string", default: "5000" }, keep: { type: "string" } },
  });
  const target = positionals[0];
  const dir = values.keep ?? (await mkdtemp(join(tmpdir(), "flaplab-profile-")));
  try {
    if (target === "network") await network(dir, values.mode, Number(values.calls));
    else if (target === "streams") {
      if (values.link !== "webtransport" && values.link !== "websocket") throw new Error(`--link must be webtransport or websocket, got ${values.link}`);
      await streams(dir, Number(values.games ?? 100), values.link);
    }
    else if (target === "engine") await engine(dir, Number(values.games ?? 2000));
    else throw new Error("usage: tsx src/profile.ts <network|streams|engine> [--mode <id>] [--link webtransport|websocket] [--games n] [--calls n] [--keep dir]");
  } finally {
    if (!values.keep) await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
