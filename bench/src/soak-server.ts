// Child process of the soak: the engine's game session handler behind the plain WebSocket link,
// with games created on demand (`POST /games?count=n`, the bench's stand-in for StartGame) and
// one sample a minute of what must stay flat. With `shards`, the games play on that many engine
// shard processes behind the same port, as `FLAPLAB_ENGINE_SHARDS` runs them in the server: this
// process then accepts, admits and hands over, and the shards tick.
import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { RecordRunResponseSchema, type ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { createGameSessionHandler, GameTable } from "@flaplab/engine";
import { type EngineShards, type ShardSample, startEngineShards } from "@flaplab/engine-shards";
import { createStreamAuthorizer, createStreamTicketSigner, createStreamTicketVerifier, loadAllComponentKeys, type StreamTicketSigner } from "@flaplab/identity";
import { createWebSocketStreams, type WebSocketStreams } from "@flaplab/stream-servers";
import { pino } from "pino";
import { planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { serveRequests } from "./child.js";
import { idleMusic, measuringScheduler, silentLogger } from "./engine-harness.js";
import { GcWatch } from "./gc.js";
import { ENGINE_PATH } from "./stream-path.js";

export type SoakServerRequest = { type: "start"; keysDir: string; shards: number } | { type: "sample" };

export interface SoakServerInfo {
  readonly wsUrl: string;
  readonly gamesUrl: string;
}

/** What the engine's processes (this one and its shards, summed) looked like over one interval. */
export interface SoakServerSample {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly fds: number;
  /** Sessions each shard holds (empty without shards). */
  readonly shardSessions: readonly number[];
  /** Games in the table (finished ones stay until swept, 60 s after their end). */
  readonly tableGames: number;
  readonly openSessions: number;
  readonly ticks: number;
  /** Ticks more than `LATE_TICK_MS` (2 ms) late. */
  readonly lateTicks: number;
  /** The worst process's p99 (the p99 of all ticks is at most that). */
  readonly latenessP99Us: number | null;
  readonly skipped: number;
  /** RecordRun calls: games that reached game over and were recorded. */
  readonly recorded: number;
  readonly gcMaxMs: number | null;
  readonly cpuUs: number;
}

const schedule = planSurvival(EASY_SEED);
const games = new GameTable({ maxGames: 50_000, maxGamesPerPlayer: 50_000, idleTtlMs: 120_000 });
const { scheduler } = measuringScheduler();
let recorded = 0;
const score: Client<typeof ScoreService> = {
  recordRun: () => {
    recorded++;
    return Promise.resolve(create(RecordRunResponseSchema, {}));
  },
  getScores: () => Promise.reject(new Error("not used")),
};
let webSockets: WebSocketStreams | undefined;
let shards: EngineShards | undefined;
let http: Server | undefined;
let tickets: StreamTicketSigner | undefined;
let nextGame = 0;
let cpu0 = process.cpuUsage();
let gc = new GcWatch();

serveRequests(
  async (req: SoakServerRequest) => {
    switch (req.type) {
      case "start": {
        const ticketKey = (await loadAllComponentKeys(join(req.keysDir, "identity"))).tickets;
        tickets = createStreamTicketSigner({ privateKey: ticketKey.privateKey, ttlSeconds: 3600 });
        const handler = createGameSessionHandler({ games, scheduler, music: idleMusic(), score, logger: silentLogger });
        const routes = { [ENGINE_PATH]: { kind: "engine", handler } };
        const logger = pino({ level: "silent" });
        if (req.shards > 0) {
          shards = await startEngineShards({ count: req.shards, games, music: idleMusic(), score, playedHere: handler.hasStream, logger, path: ENGINE_PATH });
        }
        webSockets = createWebSocketStreams({
          routes,
          authorize: createStreamAuthorizer(createStreamTicketVerifier({ publicKey: ticketKey.publicKey })),
          logger,
          // Every game is one loopback client's: the per-player and per-address shares as large as the cap.
          limits: { maxSessions: 50_000, maxSessionsPerPlayer: 50_000, maxSessionsPerAddress: 50_000 },
          ...(shards ? { handoff: shards.handoff } : {}),
        });
        http = createServer((request, response) => {
          const url = new URL(request.url ?? "/", "http://soak.invalid");
          if (request.method !== "POST" || url.pathname !== "/games") return void response.writeHead(404).end();
          const count = Math.min(1000, Math.max(1, Number(url.searchParams.get("count") ?? "1") || 1));
          void (async () => {
            const made: { id: string; ticket: string }[] = [];
            for (let i = 0; i < count; i++) {
              const id = `soak-${nextGame++}`;
              games.create({ id, owner: { username: "soak", token: "unused" }, course: schedule.course, seed: schedule.seed });
              made.push({ id, ticket: (await tickets!.sign(id, "soak")).ticket });
            }
            response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(made));
          })().catch((err: unknown) => response.writeHead(500).end(String(err)));
        });
        http.on("upgrade", webSockets.handleUpgrade);
        http.on("connection", (socket) => socket.setNoDelay(true));
        await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
        const port = (http.address() as AddressInfo).port;
        gc.start();
        cpu0 = process.cpuUsage();
        await shards?.sample();
        return { wsUrl: `ws://127.0.0.1:${port}${ENGINE_PATH}`, gamesUrl: `http://127.0.0.1:${port}/games` } satisfies SoakServerInfo;
      }
      case "sample": {
        const memory = process.memoryUsage();
        const cpu = process.cpuUsage(cpu0);
        const gcPauses = gc.stop();
        const parts: readonly ShardSample[] = (await shards?.sample(30_000)) ?? [];
        const sum = (pick: (x: ShardSample) => number) => parts.reduce((a, x) => a + pick(x), 0);
        const worst = (...values: (number | null)[]) => (values.some((v) => v !== null) ? Math.max(...values.map((v) => v ?? 0)) : null);
        const sample: SoakServerSample = {
          rssBytes: memory.rss + sum((x) => x.rssBytes),
          heapUsedBytes: memory.heapUsed + sum((x) => x.heapUsedBytes),
          fds: readdirSync("/proc/self/fd").length + sum((x) => x.fds ?? 0),
          shardSessions: parts.map((x) => x.sessions),
          tableGames: games.size,
          openSessions: (webSockets?.openSessions ?? 0) + sum((x) => x.sessions),
          ticks: scheduler.ticks + sum((x) => x.ticks),
          lateTicks: scheduler.lateTicks + sum((x) => x.lateTicks),
          latenessP99Us: worst(scheduler.ticks > 0 ? scheduler.lateness.at(99) : null, ...parts.map((x) => x.latenessUs.p99)),
          skipped: scheduler.skipped,
          recorded,
          gcMaxMs: worst(gcPauses.maxMs, ...parts.map((x) => x.gcMaxMs)),
          cpuUs: cpu.user + cpu.system + sum((x) => x.cpuUs),
        };
        scheduler.resetStats();
        recorded = 0;
        cpu0 = process.cpuUsage();
        gc = new GcWatch();
        gc.start();
        return sample;
      }
    }
  },
  async () => {
    scheduler.stop();
    await shards?.close();
    await webSockets?.close();
    http?.close();
    games.close();
  },
);
