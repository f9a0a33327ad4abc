import { readdirSync, readFileSync } from "node:fs";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import type { Deployment } from "@flaplab/deployment";
import type { Topology } from "@flaplab/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, startTopology } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, type PlayedThrough, playThrough } from "./play.js";

// microservices-sharded with FLAPLAB_ENGINE_SHARDS=1: each of the three engine groups plays its
// WebSocket games on a shard process, and the shards keep their games' snapshots in the
// deployment's Redis. The engine group that plays the most games is drained (SIGTERM) at tick
// 120, the busiest of the others killed (SIGKILL) at tick 250; their shards exit with them, and
// every game must end as the simulator says: 7 at tick 402.
const GAMES = 6;
let deployment: Deployment;
let topology: Topology;
let token: string;
let initiator: ReturnType<typeof createClient<typeof InitiatorService>>;
let url: (group: string) => string;

beforeAll(async () => {
  const started = await startTopology("microservices-sharded", {
    FLAPLAB_ENGINE_SHARDS: "1",
    FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER: "100",
    FLAPLAB_STREAM_MAX_SESSIONS_PER_PLAYER: "200",
  });
  ({ deployment, topology, url } = started);
  token = await started.register("sharded-survivor");
  initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: url("initiator"), httpVersion: "1.1" }));
}, 90_000);

afterAll(async () => {
  await deployment?.stop();
});

const auth = () => ({ headers: { authorization: `Bearer ${token}` } });
/** The engine group whose WebSocket URL this is. */
const engineAt = (wsUrl: string) => topology.groups.find((g) => wsUrl.includes(`//${g.address}/`))!.name;

/** The engine shard processes whose parent is `pid` (from /proc: their command line names shard-main). */
function shardsOfGroup(pid: number): number[] {
  const shards: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("shard-main")) shards.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return shards;
}

describe("games on engine shards that survive their engine", () => {
  it("a drained, then a killed, engine group's shard exits with it, and its games resume from their snapshots elsewhere: all end 7 at tick 402, each press applied once, every run recorded once", async () => {
    expect(deployment.snapshotStoreUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    const engines = ["engine-1", "engine-2", "engine-3"];
    // Each engine group runs one shard process.
    const shardsOf = new Map(engines.map((e) => [e, shardsOfGroup(deployment.pidOf(e)!)]));
    for (const e of engines) expect(shardsOf.get(e), e).toHaveLength(1);

    const starts: StartGameResponse[] = [];
    for (let i = 0; i < GAMES; i++) starts.push(await initiator.startGame({ seed: EASY_SEED }, auth()));
    const now = new Map<string, { engine: string; tick: number }>(starts.map((s) => [s.gameId, { engine: engineAt(s.engineWsUrl), tick: 0 }]));
    const games = Promise.all(
      starts.map((s) =>
        playThrough(s, {
          initiatorUrl: url("initiator"),
          token,
          flapTicks: EASY_FLAP_TICKS,
          onEngine: (wsUrl) => {
            now.get(s.gameId)!.engine = engineAt(wsUrl);
          },
          onTick: (tick) => {
            now.get(s.gameId)!.tick = tick;
          },
        }),
      ),
    );
    const waitTick = async (tick: number) => {
      const deadline = Date.now() + 60_000;
      while (Math.min(...[...now.values()].map((g) => g.tick)) < tick) {
        if (Date.now() > deadline) throw new Error(`the games did not reach tick ${tick}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const count = (e: string) => [...now.values()].filter((g) => g.engine === e).length;
    const busiest = (except?: string) => engines.filter((e) => e !== except).sort((a, b) => count(b) - count(a))[0]!;
    /** Stops engine `e` with `signal`: its pid, shard, games at that moment, and when. */
    const fault = (e: string, signal: NodeJS.Signals, tick: number) => {
      const at = { engine: e, signal, tick, pid: deployment.pidOf(e)!, shard: shardsOf.get(e)![0]!, games: [...now.entries()].filter(([, g]) => g.engine === e).map(([id]) => id), time: performance.now() };
      expect(at.games.length, `games on ${e}`).toBeGreaterThan(0);
      process.kill(at.pid, signal);
      return at;
    };
    await waitTick(120);
    const drained = fault(busiest(), "SIGTERM", 120);
    await waitTick(250);
    const killed = fault(busiest(drained.engine), "SIGKILL", 250);
    const played: PlayedThrough[] = await games;

    // Neither group's shard outlived it.
    for (const { engine, shard } of [drained, killed]) {
      const gone = Date.now() + 5000;
      while (alive(shard) && Date.now() < gone) await new Promise((r) => setTimeout(r, 20));
      expect(alive(shard), `${engine}'s shard`).toBe(false);
    }

    for (const g of played) {
      expect({ id: g.gameId, score: g.score, lastTick: g.lastTick, recorded: g.summary?.recorded }).toEqual({ id: g.gameId, score: 7, lastTick: 402, recorded: true });
      // Each of the 14 presses after the start was applied (acked) exactly once, across engines.
      expect([...g.acks.entries()].sort((a, b) => a[0] - b[0])).toEqual(EASY_FLAP_TICKS.map((_, i) => [i + 2, 1]));
      // Resumed from its snapshot once per fault it was in, from about where it stood (not from its
      // start), and on an engine that was up.
      const faults = [drained, killed].filter((f) => f.games.includes(g.gameId));
      expect(g.interruptions.map((i) => i.kind)).toEqual(faults.map(() => "resumed"));
      for (const [n, f] of faults.entries()) {
        const i = g.interruptions[n]!;
        expect(i.fromTick).toBeGreaterThanOrEqual(f.tick);
        expect(i.atTick - i.fromTick).toBeLessThanOrEqual(2);
        expect(i.frameAt - f.time).toBeLessThan(2000);
      }
      expect([drained.engine, killed.engine]).not.toContain(engineAt(g.engines.at(-1)!));
    }
    /** The pause of each of `f`'s games: from its last frame before the fault to its first new frame after. */
    const pauses = (f: typeof killed) =>
      played.filter((g) => f.games.includes(g.gameId)).map((g) => g.interruptions.find((i) => i.endedAt >= f.time)!.pauseMs.toFixed(0));
    console.log(
      [
        `sharded failover (${GAMES} games, one shard per engine):`,
        `  ${drained.engine} drained (SIGTERM) at tick ≈120 with ${drained.games.length} games; resume pauses ${pauses(drained).join(", ")} ms`,
        `  ${killed.engine} killed (SIGKILL) at tick ≈250 with ${killed.games.length} games; resume pauses ${pauses(killed).join(", ")} ms`,
      ].join("\n"),
    );

    // Every run recorded once.
    const scores = createClient(ScoreService, createConnectTransport({ baseUrl: url("score"), httpVersion: "1.1" }));
    const { ownRuns } = await scores.getScores({ limit: 100 }, auth());
    const mine = ownRuns.filter((r) => starts.some((s) => s.gameId === r.gameId));
    expect(mine).toHaveLength(GAMES);
    expect(mine.every((r) => r.score === 7 && r.ticks === 402)).toBe(true);
  }, 120_000);
});
