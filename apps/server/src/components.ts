import type { KeyObject } from "node:crypto";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import type { MusicService } from "@flaplab/contracts/music/v1/music_pb";
import type { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import type { ComponentName } from "@flaplab/component";
import { authComponent, authLimitsFromEnv, authTokenTtlFromEnv, createAuth, openUserStore } from "@flaplab/auth";
import {
  createEngine,
  createGameSessionHandler,
  type DrainResult,
  engineComponent,
  GameTable,
  gameTableOptionsFromEnv,
  type PendingRun,
  recordPendingRun,
  SnapshotKeeper,
  snapshotWritesFor,
  TickScheduler,
  engineClockFromEnv,
} from "@flaplab/engine";
import { createSigner, createStreamTicketSigner, hasPrivateKey, type KeyMaterial, type PublicKeyMaterial } from "@flaplab/identity";
import { createInitiator, type EngineTarget, initiatorComponent, rendezvousPlacement, singleEngine } from "@flaplab/initiator";
import { DurableOutbox } from "@flaplab/outbox";
import { openSnapshotStore, rendezvousRank, type SnapshotStore, takesGames } from "@flaplab/snapshots";
import { createMusic, createMusicSessionHandler, createMusicStreams, musicComponent, type MusicStreams } from "@flaplab/music";
import { groupOf, groupsOf, type Runtime } from "@flaplab/runtime";
import type { StreamRoute } from "@flaplab/stream-servers";
import type { Logger } from "pino";
import { createScore, openScoreStore, scoreComponent } from "@flaplab/score";
import { createWorldGen, worldgenComponent } from "@flaplab/worldgen";
import { ENGINE_STREAM_PATH, engineUrls, MUSIC_STREAM_PATH, musicUrls } from "./stream-urls.js";

/** URL paths of the two streams on a group's stream server. */
export { ENGINE_STREAM_PATH, MUSIC_STREAM_PATH, webSocketUrl } from "./stream-urls.js";

/** What the components of one process share, and what must be closed at shutdown. */
export interface MountedGroup {
  readonly names: readonly ComponentName[];
  /** Stream routes of this process (engine and music), by URL path. */
  readonly streamRoutes: Readonly<Record<string, StreamRoute>>;
  /** Music streams of this process (present when music runs here). */
  readonly musicStreams?: MusicStreams;
  /** The engine's game table (present when the engine runs here). */
  readonly games?: GameTable;
  /** The engine's snapshot store (present when the engine runs here). */
  readonly snapshotStore?: SnapshotStore;
  /** What engine shards need of the engine here (present when the engine runs here). */
  readonly engine?: EngineParts;
  /**
   * Hands this process's games over to the other engines (present when the engine runs here):
   * it stops taking games, tells each game's client where it moved, and stops its heartbeat.
   */
  readonly drain?: () => Promise<DrainResult>;
  close(): Promise<void>;
}

export interface EngineParts {
  /** The engine's clients of music and score. */
  readonly music: Client<typeof MusicService>;
  readonly score: Client<typeof ScoreService>;
  /** A game has a stream on this process's engine handler now. */
  readonly playedHere: (gameId: string) => boolean;
  /** The engine's snapshot keeper: shards keep their games' snapshots as it does. */
  readonly snapshots: SnapshotKeeper;
}

export interface MountOptions {
  readonly dataDir: string;
  readonly keys: PublicKeyMaterial;
  /** The stream-ticket key (`loadComponentKeys`'s `tickets`): a key pair where the initiator or the engine runs. */
  readonly ticketKeys: KeyMaterial | PublicKeyMaterial | undefined;
  readonly logger: Logger;
  /** Keep the score component's runs in this Postgres database instead of SQLite in `dataDir`. */
  readonly scoreDatabaseUrl?: string | undefined;
}

/**
 * Builds and mounts the components the runtime's group runs: the composition root. Each
 * component gets typed clients for the components it calls; the runtime picks the call mode.
 */
export async function mountGroup(runtime: Runtime, opts: MountOptions): Promise<MountedGroup> {
  const closers: Array<() => void | Promise<void>> = [];
  const names = runtime.group.components;
  const streamRoutes: Record<string, StreamRoute> = {};
  let musicStreams: MusicStreams | undefined;
  let games: GameTable | undefined;
  let snapshotStore: SnapshotStore | undefined;
  let engine: EngineParts | undefined;
  let drain: (() => Promise<DrainResult>) | undefined;
  const closeAll = async () => {
    for (const close of [...closers].reverse()) await close();
  };
  try {
    for (const name of names) {
      switch (name) {
        case "auth": {
          if (!hasPrivateKey(opts.keys)) {
            throw new Error("the auth component needs the private signing key (FLAPLAB_JWT_PRIVATE_KEY or the data dir)");
          }
          // Bad FLAPLAB_AUTH_* values fail here, before the store is opened.
          const limits = authLimitsFromEnv(process.env);
          const ttlSeconds = authTokenTtlFromEnv(process.env);
          const store = openUserStore(opts.dataDir);
          closers.push(() => store.close());
          runtime.mount(
            authComponent,
            createAuth({
              store,
              signer: createSigner({ privateKey: opts.keys.privateKey, ttlSeconds }),
              limits,
              logger: opts.logger.child({ component: "auth" }),
            }),
          );
          break;
        }
        case "worldgen":
          runtime.mount(worldgenComponent, createWorldGen());
          break;
        case "engine": {
          const logger = opts.logger.child({ component: "engine" });
          const table = new GameTable({ ...gameTableOptionsFromEnv(process.env), logger });
          games = table;
          closers.push(() => table.close());
          // Bad FLAPLAB_ENGINE_CLOCK values fail here, at start-up.
          const ticks = engineClockFromEnv(process.env);
          closers.push(() => ticks.close());
          const scheduler = new TickScheduler({ clock: ticks.clock });
          closers.push(() => scheduler.stop());
          const store = await openStore(runtime, logger);
          snapshotStore = store;
          closers.push(() => store.close());
          const snapshots = new SnapshotKeeper({ store, engine: runtime.group.name, games: table, logger, writes: snapshotWritesFor(store) });
          closers.push(() => snapshots.stop());
          await snapshots.startHeartbeats();
          runtime.mount(engineComponent, createEngine({ games, snapshots }));
          const clients = { music: runtime.client(musicComponent, "engine"), score: runtime.client(scoreComponent, "engine") };
          // Runs the score component could not take at game over: on disk, recorded when it is back.
          const outbox = new DurableOutbox<PendingRun>({
            file: join(opts.dataDir, `outbox-${runtime.group.name}.sqlite`),
            deliver: (run) => recordPendingRun(clients.score, run),
            logger,
          });
          closers.push(() => outbox.close());
          outbox.start();
          const handler = createGameSessionHandler({ games, scheduler, ...clients, logger, snapshots, outbox: { add: (run) => outbox.add(run.gameId, run) } });
          engine = { ...clients, playedHere: handler.hasStream, snapshots };
          streamRoutes[ENGINE_STREAM_PATH] = { kind: "engine", handler };
          const tickets = createStreamTicketSigner({ privateKey: ticketSigningKey(opts.ticketKeys, "engine") });
          const targets = new Map(groupsOf(runtime.topology, "engine").map((g) => [g.name, g]));
          drain = async () => {
            await snapshots.startDraining();
            // The other engines that are up and not draining, ranked per game as the initiator would.
            const open = (await store.liveEngines().catch(() => []))
              .filter((b) => b.engine !== runtime.group.name && targets.has(b.engine) && takesGames(b))
              .map((b) => b.engine);
            const result = await handler.drain(async (gameId) => {
              const to = rendezvousRank(gameId, open)[0];
              if (to === undefined) return undefined;
              const urls = engineUrls(targets.get(to)!);
              const game = table.get(gameId);
              const { ticket } = await tickets.sign(gameId, game?.owner.username ?? "", to);
              return { engineUrl: urls.engineUrl, engineWsUrl: urls.engineWsUrl, streamTicket: ticket };
            });
            logger.info({ event: "drained", ...result, to: open }, "engine drained");
            await snapshots.stop();
            return result;
          };
          break;
        }
        case "initiator": {
          const musicGroup = groupOf(runtime.topology, "music")!;
          const targets: EngineTarget[] = groupsOf(runtime.topology, "engine").map((g) => ({
            name: g.name,
            client: runtime.client(engineComponent, "initiator", { group: g.name }),
            ...engineUrls(g),
          }));
          let engines = singleEngine(targets[0]!);
          if (targets.length > 1) {
            // Several engines: place each game on one that is up, by their heartbeats in the store.
            const logger = opts.logger.child({ component: "initiator" });
            const store = await openStore(runtime, logger);
            closers.push(() => store.close());
            engines = rendezvousPlacement({
              engines: targets,
              liveEngines: () => store.liveEngines(),
              holderOf: async (gameId) => (await store.read(gameId))?.snapshot.engine,
              onError: (err) => logger.warn({ event: "heartbeats-unreadable", err: err.message }, "engine heartbeats cannot be read; trying every engine"),
            });
          }
          runtime.mount(
            initiatorComponent,
            createInitiator({
              worldgen: runtime.client(worldgenComponent, "initiator"),
              engines,
              music: musicUrls(musicGroup),
              tickets: createStreamTicketSigner({ privateKey: ticketSigningKey(opts.ticketKeys, "initiator") }),
            }),
          );
          break;
        }
        case "music":
          musicStreams = createMusicStreams();
          runtime.mount(musicComponent, createMusic({ streams: musicStreams }));
          streamRoutes[MUSIC_STREAM_PATH] = { kind: "music", handler: createMusicSessionHandler({ streams: musicStreams }) };
          break;
        case "score": {
          const logger = opts.logger.child({ component: "score" });
          const store = await openScoreStore({
            dataDir: opts.dataDir,
            databaseUrl: opts.scoreDatabaseUrl,
            onConnectionError: (err) =>
              logger.warn({ event: "score-database-error", err: err.message }, "score database connection lost; the next call reconnects"),
          });
          closers.push(() => store.close());
          runtime.mount(scoreComponent, createScore({ store }));
          break;
        }
      }
    }
  } catch (err) {
    // A component that cannot start (say, an unreachable score database) closes what already opened.
    await closeAll();
    throw err;
  }
  return {
    names,
    streamRoutes,
    ...(musicStreams ? { musicStreams } : {}),
    ...(games ? { games } : {}),
    ...(snapshotStore ? { snapshotStore } : {}),
    ...(engine ? { engine } : {}),
    ...(drain ? { drain } : {}),
    close: closeAll,
  };
}

/** The deployment's snapshot store (FLAPLAB_SNAPSHOT_STORE; in process for a single engine). */
function openStore(runtime: Runtime, logger: Logger): Promise<SnapshotStore> {
  let lastLogMs = Number.NEGATIVE_INFINITY;
  return openSnapshotStore(process.env, {
    engines: groupsOf(runtime.topology, "engine").length,
    topology: runtime.topology.name,
    onError: (err) => {
      // The client reconnects by itself; say so at most every few seconds.
      if (Date.now() - lastLogMs < 5000) return;
      lastLogMs = Date.now();
      logger.warn({ event: "snapshot-store-error", err: err.message }, "snapshot store connection failed; reconnecting");
    },
  });
}

export function callLogPath(dataDir: string, topology: string, group: string): string {
  return join(dataDir, "logs", `rpc-${topology}-${group}.ndjson`);
}

/** The stream-ticket key's private half, which the initiator and the engine sign tickets with. */
function ticketSigningKey(keys: KeyMaterial | PublicKeyMaterial | undefined, component: "engine" | "initiator"): KeyObject {
  if (keys === undefined || !hasPrivateKey(keys)) throw new Error(`the ${component} signs stream tickets, but this process holds no private stream-ticket key`);
  return keys.privateKey;
}
