import { once } from "node:events";
import { Code, ConnectError } from "@connectrpc/connect";
import { join } from "node:path";
import { corsOriginsFromEnv, createHost, defaultCorsOrigins, hostLimitsFromEnv, resolveHostLimits, type Host, type HostLimits } from "@flaplab/host";
import { type EngineShards, engineShardsFromEnv, startEngineShards } from "@flaplab/engine-shards";
import { createStreamServer, createWebSocketStreams, loadOrCreateDevCertificate, streamLimitsFromEnv, type StreamLimits, type StreamServer } from "@flaplab/stream-servers";
import {
  createServiceSigner,
  createStreamAuthorizer,
  createStreamTicketVerifier,
  createVerifier,
  loadComponentKeys,
  loadKeys,
  signingKeysOf,
  verifyingKeysOf,
} from "@flaplab/identity";
import { createCallLogger, createRuntime, parseAddress, pinoCallLog, type Runtime, type Topology } from "@flaplab/runtime";
import type { Tracing } from "@flaplab/telemetry";
import { pino, type Logger } from "pino";
import { callLogPath, ENGINE_STREAM_PATH, mountGroup, type MountedGroup } from "./components.js";

export interface ServerOptions {
  readonly topology: Topology;
  readonly group: string;
  readonly dataDir: string;
  readonly logger: Logger;
  /** Listen on this port instead of the group's (0: any free port). */
  readonly port?: number;
  /** Stream server port instead of the group's stream address (0: any free port). */
  readonly streamPort?: number;
  /** Postgres URL for the score component's runs (FLAPLAB_SCORE_DATABASE_URL); SQLite in `dataDir` without one. */
  readonly scoreDatabaseUrl?: string;
  /** RPC port limits: defaults, then FLAPLAB_* environment overrides (docs/settings.md), then these. */
  readonly hostLimits?: Partial<HostLimits>;
  /** Stream port limits: defaults, then FLAPLAB_STREAM_* environment overrides (packages/game/stream-servers README), then these. */
  readonly streamLimits?: Partial<StreamLimits>;
  /** Browser origins allowed on the RPC port; default FLAPLAB_CORS_ORIGINS, else the local web client and the topology's web address. */
  readonly corsOrigins?: readonly string[];
  /** OpenTelemetry tracing of the group's calls (`startTracing`); off without. `stop()` flushes it last. */
  readonly tracing?: Tracing | undefined;
}

export interface RunningServer {
  readonly runtime: Runtime;
  readonly host: Host;
  readonly port: number;
  readonly callLogFile: string;
  readonly mounted: MountedGroup;
  /** The WebTransport server, when the group runs the engine or music (the WebSocket link is on `port`). */
  readonly streams?: StreamServer;
  /** The engine's shard processes, when FLAPLAB_ENGINE_SHARDS asks for them. */
  readonly shards?: EngineShards;
  stop(): Promise<void>;
}

/** Starts one process group of a topology: its components, behind one Fastify host. */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const { topology, group, dataDir, logger } = opts;
  // Bad FLAPLAB_* values fail here, before anything is opened.
  const hostLimits = resolveHostLimits({ ...hostLimitsFromEnv(process.env), ...opts.hostLimits });
  const streamLimits = { ...streamLimitsFromEnv(process.env), ...opts.streamLimits };
  const shardCount = engineShardsFromEnv(process.env);
  const corsOrigins = opts.corsOrigins ?? corsOriginsFromEnv(process.env, defaultCorsOrigins(topology.web.publicUrl));
  const components = topology.groups.find((g) => g.name === group)?.components ?? [];
  const keys = await loadKeys({ dataDir, create: components.includes("auth") });
  // Each component's own key signs its calls; every component's public key checks who calls; the
  // stream-ticket key is held only by the components that issue or admit streams.
  const componentKeys = await loadComponentKeys({ components, dataDir });
  const verifier = createVerifier({ publicKey: keys.publicKey, componentKeys: verifyingKeysOf(componentKeys) });
  const callLogFile = callLogPath(dataDir, topology.name, group);
  // Asynchronous, but unbuffered: a game's records are on disk moments after its calls.
  const destination = pino.destination({ dest: callLogFile, mkdir: true, sync: false });
  // Open before anything else can fail (the score database, say): exiting while the file is still
  // opening makes pino's exit-time flush throw over the real error.
  await once(destination, "ready");
  const runtime = createRuntime({
    topology,
    group,
    verifier,
    serviceSigner: createServiceSigner({ keys: signingKeysOf(componentKeys) }),
    callLog: pinoCallLog(createCallLogger(destination)),
    tracer: opts.tracing?.tracer,
  });
  const mounted = await mountGroup(runtime, { dataDir, keys, ticketKeys: componentKeys.tickets, logger, scoreDatabaseUrl: opts.scoreDatabaseUrl });
  const hasStreams = Object.keys(mounted.streamRoutes).length > 0;
  // The stream ticket StartGame issued (`ticket` query parameter), signed with the stream-ticket
  // key; the handlers check it names the URL's game and, on the engine, the game's owner.
  const ticketAuthorizer =
    componentKeys.tickets !== undefined ? createStreamAuthorizer(createStreamTicketVerifier({ publicKey: componentKeys.tickets.publicKey })) : noTickets;
  // A game stream only at the engine its ticket names: a ticket is no way to move a game to
  // another engine (only ResumeGame moves one, and only from an engine that is gone or draining).
  const authorize = async (query: URLSearchParams, kind: string) => {
    const principal = await ticketAuthorizer(query);
    if (kind === "engine" && principal.engine !== group) {
      throw new ConnectError(`the stream ticket is for engine ${principal.engine ?? "(none)"}, not ${group}`, Code.PermissionDenied);
    }
    return principal;
  };
  // The engine's games on shard processes (FLAPLAB_ENGINE_SHARDS): WebSocket game sessions go there.
  const shards =
    shardCount > 0 && mounted.games && mounted.engine
      ? await startEngineShards({ count: shardCount, games: mounted.games, ...mounted.engine, logger: logger.child({ component: "engine" }), path: ENGINE_STREAM_PATH })
      : undefined;
  // The plain WebSocket link: the same routes on the RPC port.
  const webSockets = hasStreams
    ? createWebSocketStreams({ routes: mounted.streamRoutes, authorize, limits: streamLimits, logger, ...(shards ? { handoff: shards.handoff } : {}) })
    : undefined;
  const host = await createHost({
    runtime,
    logger,
    limits: hostLimits,
    corsOrigins,
    ...(webSockets ? { onUpgrade: webSockets.handleUpgrade } : {}),
  });
  const port = await host.listen(opts.port);
  let streams: StreamServer | undefined;
  if (hasStreams) {
    const group = runtime.group;
    const { host: streamHost, port: streamPort } = parseAddress(group.streamAddress);
    streams = await createStreamServer({
      host: streamHost,
      port: opts.streamPort ?? streamPort,
      certificate: await loadOrCreateDevCertificate(join(dataDir, "tls"), [streamHost]),
      routes: mounted.streamRoutes,
      authorize,
      limits: streamLimits,
      logger,
    });
  }
  logger.info(
    {
      event: "listening",
      topology: topology.name,
      group,
      port,
      components: mounted.names,
      callLog: callLogFile,
      ...(streams ? { streamPort: streams.port, streamTransports: streams.transports } : {}),
      ...(shards ? { engineShards: shards.stats().map((s) => s.pid) } : {}),
    },
    "server listening",
  );
  let stopping: Promise<void> | undefined;
  return {
    runtime,
    host,
    port,
    callLogFile,
    mounted,
    ...(streams ? { streams } : {}),
    ...(shards ? { shards } : {}),
    stop() {
      stopping ??= (async () => {
        // The engine's games go to the other engines first (or stay in the store for ResumeGame).
        await mounted.drain?.().catch((err: unknown) => logger.error({ event: "drain-failed", err: (err as Error).message }, "drain failed"));
        await streams?.close();
        await webSockets?.close();
        await shards?.close();
        await host.close();
        runtime.close();
        await mounted.close();
        await new Promise<void>((resolve) => {
          destination.flushSync?.();
          destination.end();
          destination.once("close", () => resolve());
          setTimeout(resolve, 1000).unref();
        });
        // The spans of the last calls (a drained game's RecordRun) are exported before exit.
        await opts.tracing?.shutdown();
        logger.info({ event: "stopped", group }, "server stopped");
      })();
      return stopping;
    },
  };
}

/** A group without a stream component holds no ticket key: it admits no stream. */
const noTickets = (): Promise<never> => Promise.reject(new ConnectError("this process serves no streams", Code.NotFound));
