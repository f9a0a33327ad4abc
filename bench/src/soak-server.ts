// Child process of the soak: the engine's game session handler behind the plain WebSocket link,
// with games created on demand (`POST /games?count=n`, the bench's stand-in for StartGame) and
// one sample a minute of what must stay flat.
import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { RecordRunResponseSchema, type ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { createGameSessionHandler, GameTable } from "@flaplab/engine";
import { createStreamAuthorizer, createStreamTicketSigner, createStreamTicketVerifier, loadServiceKeys, type StreamTicketSigner } from "@flaplab/identity";
import { createWebSocketStreams, type WebSocketStreams } from "@flaplab/streams";
import { pino } from "pino";
import { findFlapSchedule } from "./autopilot.js";
import { serveRequests } from "./child.js";
import { idleMusic, measuringScheduler, silentLogger } from "./engine-harness.js";
import { GcWatch } from "./gc.js";
import { ENGINE_PATH } from "./stream-path.js";

export type SoakServerRequest = { type: "start"; keysDir: string } | { type: "sample" };

export interface SoakServerInfo {
  readonly wsUrl: string;
  readonly gamesUrl: string;
}

/** What the engine process looked like over one interval. */
export interface SoakServerSample {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly fds: number;
  /** Games in the table (finished ones stay until swept, 60 s after their end). */
  readonly tableGames: number;
  readonly openSessions: number;
  readonly ticks: number;
  /** Ticks more than `LATE_TICK_MS` (2 ms) late. */
  readonly lateTicks: number;
  readonly latenessP99Us: number | null;
  readonly skipped: number;
  /** RecordRun calls: games that reached game over and were recorded. */
  readonly recorded: number;
  readonly gcMaxMs: number | null;
  readonly cpuUs: number;
}

const schedule = findFlapSchedule();
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
let http: Server | undefined;
let tickets: StreamTicketSigner | undefined;
let nextGame = 0;
let cpu0 = process.cpuUsage();
let gc = new GcWatch();

serveRequests(
  async (req: SoakServerRequest) => {
    switch (req.type) {
      case "start": {
        const serviceKeys = await loadServiceKeys({ dataDir: join(req.keysDir, "identity"), env: {} });
        tickets = createStreamTicketSigner({ privateKey: serviceKeys.privateKey, ttlSeconds: 3600 });
        const handler = createGameSessionHandler({ games, scheduler, music: idleMusic(), score, logger: silentLogger });
        const routes = { [ENGINE_PATH]: { kind: "engine", handler } };
        webSockets = createWebSocketStreams({
          routes,
          authorize: createStreamAuthorizer(createStreamTicketVerifier({ publicKey: serviceKeys.publicKey })),
          logger: pino({ level: "silent" }),
          limits: { maxSessions: 50_000 },
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
        return { wsUrl: `ws://127.0.0.1:${port}${ENGINE_PATH}`, gamesUrl: `http://127.0.0.1:${port}/games` } satisfies SoakServerInfo;
      }
      case "sample": {
        const memory = process.memoryUsage();
        const cpu = process.cpuUsage(cpu0);
        const gcPauses = gc.stop();
        const sample: SoakServerSample = {
          rssBytes: memory.rss,
          heapUsedBytes: memory.heapUsed,
          fds: readdirSync("/proc/self/fd").length,
          tableGames: games.size,
          openSessions: webSockets?.openSessions ?? 0,
          ticks: scheduler.ticks,
          lateTicks: scheduler.lateTicks,
          latenessP99Us: scheduler.lateness.at(99),
          skipped: scheduler.skipped,
          recorded,
          gcMaxMs: gcPauses.maxMs,
          cpuUs: cpu.user + cpu.system,
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
    await webSockets?.close();
    http?.close();
    games.close();
  },
);
