import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { startDeployment } from "@flaplab/deployment";
import { type ActiveEdge, edgeRtt, loadRttTable } from "@flaplab/netem";
import { loadTopology } from "@flaplab/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { readCallLog, topologyOnFreePorts } from "./helpers.js";
import { playOver } from "./play.js";

// `pnpm dev multiregion` on one machine: every cross-region call takes its emulated RTT. Measured
// against the same topology without emulation (the loopback cost of each edge).
const EDGES = [
  ["initiator", "worldgen"],
  ["initiator", "engine"],
  ["engine", "music"],
  ["engine", "score"],
] as const;
/** Codes of calls that reached the callee: PlayMusic answers not_found when no music stream is open (none is, here). */
const ANSWERED = new Set(["ok", "not_found"]);
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/**
 * The RTT table with every delay 0: the baseline deployment then runs through the same proxies on
 * loopback as the emulated one, so the comparison isolates the delay the emulation adds.
 */
async function zeroRttTable(dir: string): Promise<string> {
  const table = JSON.parse(await readFile(join(import.meta.dirname, "../../../topologies/rtt.json"), "utf8")) as {
    sameZone: { rttMs: number; jitterMs: number };
    crossZone: { rttMs: number; jitterMs: number };
    crossRegionJitterMs: number;
    regions: Record<string, Record<string, number>>;
  };
  table.sameZone = { rttMs: 0, jitterMs: 0 };
  table.crossZone = { rttMs: 0, jitterMs: 0 };
  table.crossRegionJitterMs = 0;
  for (const row of Object.values(table.regions)) for (const b of Object.keys(row)) row[b] = 0;
  const file = join(dir, "rtt-zero.json");
  await writeFile(file, JSON.stringify(table));
  return file;
}

interface Run {
  /** Median call duration per edge ("initiator->worldgen"), ms, as the caller logged it. */
  readonly medians: Map<string, number>;
  /** Calls per edge, and how many of them did not reach the callee (a transport error, a timeout). */
  readonly calls: Map<string, { all: number; failed: number }>;
  readonly edges: readonly ActiveEdge[];
  /** The call URLs the initiator and the engine were given for the groups they call. */
  readonly callUrls: Map<string, string>;
}

async function runDeployment(emulate: boolean, tlsBetweenRegions = false): Promise<Run> {
  const topo = await topologyOnFreePorts("multiregion");
  const dataDir = join(topo.dir, "data");
  const deployment = await startDeployment(topo.file, {
    dataDir,
    web: "none",
    tlsBetweenRegions,
    ...(emulate ? {} : { rttFile: await zeroRttTable(topo.dir) }),
  });
  cleanups.push(async () => {
    await deployment.stop();
  });
  await deployment.ready;
  const topology = await loadTopology(topo.file);
  const url = (g: string) => `http://${topology.groups.find((x) => x.name === g)!.address}`;
  const auth = createClient(AuthService, createConnectTransport({ baseUrl: url("auth"), httpVersion: "1.1" }));
  const token = (await auth.register({ username: `emu${emulate ? 1 : 0}`, password: "a long enough password" })).session!.token;
  const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: url("initiator"), httpVersion: "1.1" }));
  const certSha256 = await certHash(dataDir);
  // Six games, each with four flaps (PlayMusic each) and a game over (RecordRun): enough calls per
  // edge that one cold or descheduled call does not move the median.
  for (let game = 0; game < 6; game++) {
    const g = await initiator.startGame({ seed: 6977347407732442987n }, { headers: { authorization: `Bearer ${token}` } });
    await playOver(g, [11, 21, 31, 41], { link: "webtransport", certSha256 });
  }
  await deployment.stop();
  const callUrls = new Map<string, string>();
  for (const [src, dst] of EDGES) {
    const seen = JSON.parse(await readFile(join(dataDir, "emulation", `multiregion-${src}.json`), "utf8")) as { groups: Record<string, { callUrl: string }> };
    callUrls.set(`${src}->${dst}`, seen.groups[dst]!.callUrl);
  }
  const records = [
    ...(await readCallLog(join(dataDir, "logs", "rpc-multiregion-initiator.ndjson"))),
    ...(await readCallLog(join(dataDir, "logs", "rpc-multiregion-engine.ndjson"))),
  ];
  const medians = new Map<string, number>();
  const calls = new Map<string, { all: number; failed: number }>();
  for (const [src, dst] of EDGES) {
    const edge = records.filter((r) => r["src"] === src && r["dst"] === dst);
    const ms = edge.map((r) => Number(r["durationNs"]) / 1e6).sort((a, b) => a - b);
    medians.set(`${src}->${dst}`, ms[Math.floor(ms.length / 2)]!);
    calls.set(`${src}->${dst}`, { all: edge.length, failed: edge.filter((r) => !ANSWERED.has(String(r["code"]))).length });
  }
  return { medians, calls, edges: deployment.emulation?.edges ?? [], callUrls };
}

async function certHash(dataDir: string): Promise<Uint8Array> {
  const { loadOrCreateDevCertificate } = await import("@flaplab/stream-servers");
  return (await loadOrCreateDevCertificate(join(dataDir, "tls"))).sha256;
}

describe("emulated multi-region deployment", () => {
  it("puts each cross-region edge's RTT on the wire: median within ±10 % of RTT + its loopback median", async () => {
    const loopback = (await runDeployment(false)).medians;
    const emulated = (await runDeployment(true)).medians;
    const table = await loadRttTable();
    const topology = await loadTopology("multiregion", join(import.meta.dirname, "../../../topologies"));
    for (const [src, dst] of EDGES) {
      const a = topology.groups.find((g) => g.components.includes(src))!;
      const b = topology.groups.find((g) => g.components.includes(dst))!;
      const rtt = edgeRtt(table, a, b).rttMs;
      const key = `${src}->${dst}`;
      const expected = rtt + loopback.get(key)!;
      const got = emulated.get(key)!;
      console.log(`${key}: RTT ${rtt} ms + loopback ${loopback.get(key)!.toFixed(2)} ms = ${expected.toFixed(1)} ms; measured median ${got.toFixed(1)} ms (${((got / expected - 1) * 100).toFixed(1)} %)`);
      expect(Math.abs(got - expected)).toBeLessThanOrEqual(0.1 * expected);
    }
  }, 240_000);

  it("with --tls, calls between regions go over https:// on kept-alive TLS connections: no call fails and none pays a handshake", async () => {
    const run = await runDeployment(true, true);
    const table = await loadRttTable();
    const topology = await loadTopology("multiregion", join(import.meta.dirname, "../../../topologies"));
    for (const [src, dst] of EDGES) {
      const key = `${src}->${dst}`;
      const edge = run.edges.find((e) => e.from === src && e.to === dst && e.port === "connect")!;
      const calls = run.calls.get(key)!;
      const rtt = edgeRtt(table, topology.groups.find((g) => g.components.includes(src))!, topology.groups.find((g) => g.components.includes(dst))!).rttMs;
      const median = run.medians.get(key)!;
      console.log(`${key}: ${run.callUrls.get(key)} (TLS ${edge.tls?.listen} → ${edge.tls?.upstream}), ${calls.all} calls, ${calls.failed} failed, ${edge.tls?.handshakes} TLS handshake(s), median ${median.toFixed(1)} ms (RTT ${rtt} ms)`);
      expect(run.callUrls.get(key)).toBe(`https://${edge.listen}`);
      expect(edge.tls?.upstream).toBe(edge.upstream);
      expect(calls.all).toBeGreaterThanOrEqual(6);
      expect(calls.failed).toBe(0);
      // Kept alive: a handshake per connection, not per call (an overlapping call may open a second).
      expect(edge.tls!.handshakes).toBeGreaterThanOrEqual(1);
      expect(edge.tls!.handshakes).toBeLessThanOrEqual(Math.min(3, calls.all / 2));
      // A call that paid a TLS 1.3 handshake would take two RTTs: the median call takes one (plus
      // this machine's loopback cost, well under half an RTT).
      expect(median).toBeGreaterThanOrEqual(rtt);
      expect(median).toBeLessThan(1.5 * rtt);
    }
  }, 240_000);
});
