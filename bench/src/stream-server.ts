// Child process for section 3b: the real stream server with the engine's game session handler,
// over WebTransport (HTTP/2 mapping) and over plain WebSocket.
import { createGameSessionHandler, GameTable, SnapshotKeeper, snapshotWritesFor } from "@flaplab/engine";
import { type EngineShards, type ShardSample, startEngineShards } from "@flaplab/engine-shards";
import { createStreamAuthorizer, createStreamTicketSigner, createStreamTicketVerifier, loadAllComponentKeys, type StreamTicketSigner } from "@flaplab/identity";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createDevCertificate, createStreamServer, createWebSocketStreams, type StreamServer, type WebSocketStreams } from "@flaplab/stream-servers";
import { MemorySnapshotStore } from "@flaplab/snapshots";
import { pino } from "pino";
import { planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { serveRequests } from "./child.js";
import type { GcPauses } from "./gc.js";
import { ProcessMeter } from "./meter.js";
import { idleMusic, idleScore, measuringScheduler, silentLogger } from "./engine-harness.js";
import type { Percentiles } from "./hist.js";
import { startProfile, stopProfile } from "./inspector-profile.js";
import { join } from "node:path";

import { ENGINE_PATH } from "./stream-path.js";

export type StreamServerRequest =
  | { type: "start"; keysDir: string; shards?: number }
  | { type: "games"; count: number; prefix: string }
  | { type: "reset"; profile?: boolean }
  | { type: "stats"; profileFile?: string }
  | { type: "clear" };

export interface StreamServerInfo {
  /** The WebTransport URL of the engine's game stream. */
  readonly url: string;
  /** The same stream over plain WebSocket, on an HTTP/1.1 port as the server's RPC port serves it. */
  readonly wsUrl: string;
  /** SHA-256 of the certificate, base64. */
  readonly certSha256: string;
  readonly transports: string;
}

/** A game made for the bench player, and the stream ticket that opens it. */
export interface StreamGame {
  readonly id: string;
  readonly ticket: string;
}

/** Opening thousands of games takes longer than a real ticket's minute; the bench's tickets live an hour. */
const BENCH_TICKET_TTL_S = 3600;

export interface StreamServerStats {
  readonly lateness: Percentiles;
  readonly ticks: number;
  readonly skipped: number;
  readonly cpuUs: number;
  readonly wallMs: number;
  readonly openSessions: number;
  readonly games: number;
  readonly gc: GcPauses;
  readonly longestBurstMs: number;
}

const schedule = planSurvival(EASY_SEED);
const games = new GameTable({ maxGames: 20_000, maxGamesPerPlayer: 20_000, idleTtlMs: 3600_000 });
const { scheduler } = measuringScheduler();
let server: StreamServer | undefined;
let shards: EngineShards | undefined;
let webSockets: WebSocketStreams | undefined;
let http: Server | undefined;
let tickets: StreamTicketSigner | undefined;
const meter = new ProcessMeter();

function worstShard(samples: readonly ShardSample[]): Percentiles {
  const worst = (pick: (x: ShardSample) => number | null) => Math.max(...samples.map((x) => pick(x) ?? 0));
  return {
    samples: samples.reduce((a, x) => a + x.ticks, 0),
    p50: worst((x) => x.latenessUs.p50),
    p99: worst((x) => x.latenessUs.p99),
    p999: worst((x) => x.latenessUs.p999),
    max: worst((x) => x.latenessUs.max),
    mean: null,
  };
}

serveRequests(
  async (req: StreamServerRequest) => {
    switch (req.type) {
      case "start": {
        // The stream-ticket key, as the initiator signs tickets with it and the server checks them.
        const ticketKey = (await loadAllComponentKeys(join(req.keysDir, "identity"))).tickets;
        tickets = createStreamTicketSigner({ privateKey: ticketKey.privateKey, ttlSeconds: BENCH_TICKET_TTL_S });
        // As the server runs one engine: its snapshot store in memory, written when a game leaves.
        const store = new MemorySnapshotStore();
        const snapshots = new SnapshotKeeper({ store, engine: "bench", games, writes: snapshotWritesFor(store) });
        const handler = createGameSessionHandler({ games, scheduler, music: idleMusic(), score: idleScore(), logger: silentLogger, snapshots });
        const routes = { [ENGINE_PATH]: { kind: "engine", handler } };
        const authorize = createStreamAuthorizer(createStreamTicketVerifier({ publicKey: ticketKey.publicKey }));
        const logger = pino({ level: "silent" });
        // Every game is one loopback client's, often of one player: the per-player and per-address shares as large as the cap.
        const limits = { maxSessions: 20_000, maxSessionsPerPlayer: 20_000, maxSessionsPerAddress: 20_000, streamOpenTimeoutMs: 30_000 };
        server = await createStreamServer({ host: "127.0.0.1", port: 0, certificate: await createDevCertificate(), routes, authorize, logger, limits });
        if (req.shards) {
          // The WebSocket link's games go to shard processes, as FLAPLAB_ENGINE_SHARDS does in the server.
          shards = await startEngineShards({ count: req.shards, games, music: idleMusic(), score: idleScore(), playedHere: handler.hasStream, logger, path: ENGINE_PATH });
        }
        webSockets = createWebSocketStreams({ routes, authorize, logger, limits, ...(shards ? { handoff: shards.handoff } : {}) });
        http = createServer((_req, res) => res.writeHead(404).end());
        http.on("upgrade", webSockets.handleUpgrade);
        // As the host's front server does for every connection.
        http.on("connection", (socket) => socket.setNoDelay(true));
        await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
        const wsPort = (http.address() as AddressInfo).port;
        return {
          wsUrl: `ws://127.0.0.1:${wsPort}${ENGINE_PATH}`,
          url: `https://127.0.0.1:${server.port}${ENGINE_PATH}`,
          certSha256: Buffer.from(server.certificate.sha256).toString("base64"),
          transports: server.transports,
        } satisfies StreamServerInfo;
      }
      case "games": {
        if (!tickets) throw new Error("start the stream server first");
        const made: StreamGame[] = [];
        for (let i = 0; i < req.count; i++) {
          const id = `${req.prefix}-${i}`;
          games.create({ id, owner: { username: "bench", token: "unused" }, course: schedule.course, seed: schedule.seed });
          made.push({ id, ticket: (await tickets.sign(id, "bench")).ticket });
        }
        return made;
      }
      case "reset":
        // The step's games are all playing: what is garbage now is the earlier steps'.
        (globalThis as { gc?: () => void }).gc?.();
        if (req.profile) await startProfile();
        scheduler.resetStats();
        await shards?.sample();
        meter.reset();
        return null;
      case "stats": {
        const { cpuUs, wallMs, gc } = meter.read();
        if (req.profileFile) await stopProfile(req.profileFile);
        const sampled = await shards?.sample();
        const shardCpuUs = (sampled ?? []).reduce((a, x) => a + x.cpuUs, 0);
        return {
          // With shards: the worst shard's lateness (the p99 of all ticks is at most that), and
          // the CPU of the group's process and every shard.
          lateness: sampled ? worstShard(sampled) : scheduler.lateness.summary(),
          ticks: sampled ? sampled.reduce((a, x) => a + x.ticks, 0) : scheduler.ticks,
          skipped: scheduler.skipped,
          cpuUs: cpuUs + shardCpuUs,
          wallMs,
          openSessions: (server?.openSessions ?? 0) + (webSockets?.openSessions ?? 0),
          games: games.size,
          gc,
          longestBurstMs: scheduler.longestBurstMs,
        } satisfies StreamServerStats;
      }
      case "clear":
        for (const g of [...games.values()]) games.delete(g.id);
        return null;
    }
  },
  async () => {
    scheduler.stop();
    await shards?.close();
    await server?.close();
    await webSockets?.close();
    http?.close();
  },
);
