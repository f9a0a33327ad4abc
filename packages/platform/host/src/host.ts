import { cors as connectCors } from "@connectrpc/connect";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { DescService } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import fastifyCors from "@fastify/cors";
import { parseAddress } from "@flaplab/runtime";
import { fastify, LogController, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createConnectRoutes } from "./connect-routes.js";
import { defaultCorsOrigins, normalizeOrigin, resolveHostLimits, type HostLimits } from "./config.js";
import { createDualProtocolServer, type DualProtocolServer, type UpgradeHandler } from "./dual-protocol-server.js";

/**
 * What the host serves of a runtime (a `Runtime` is one): the services mounted in this process with
 * their implementations, and the names and address `/healthz` and `listen` use.
 */
export interface HostedRuntime {
  readonly topology: { readonly name: string };
  readonly group: { readonly name: string; readonly address: string };
  readonly mounted: readonly {
    readonly definition: { readonly name: string; readonly service: DescService };
    readonly impl: ServiceImpl<DescService>;
  }[];
}

export interface HostOptions {
  readonly runtime: HostedRuntime;
  readonly logger: Logger;
  /** Largest request body accepted (default: the runtime's, 1 MiB). */
  readonly readMaxBytes?: number;
  /** Extra routes (e.g. streams) registered on the same Fastify instance. */
  readonly extend?: (app: FastifyInstance) => Promise<void> | void;
  /** Connection timeouts, connection cap, overload limits (defaults: DEFAULT_HOST_LIMITS). */
  readonly limits?: Partial<HostLimits>;
  /**
   * Browser origins allowed to call (CORS); any other origin gets no access-control-allow-origin.
   * Default: the local web client, http://127.0.0.1:5173 and http://localhost:5173.
   */
  readonly corsOrigins?: readonly string[];
  /** Interval of the rate-limited shed and connection logs (default 5000 ms). */
  readonly logIntervalMs?: number;
  /** HTTP/1.1 Upgrade requests (the WebSocket stream link) on the same port. */
  readonly onUpgrade?: UpgradeHandler;
}

export interface HostStats {
  /** RPCs being handled / waiting for a slot now. */
  readonly inFlight: number;
  readonly queued: number;
  /** RPCs whose body is still coming in (they hold no slot yet). */
  readonly receiving: number;
  /** RPCs shed with resource_exhausted since start, per reason (`queue-full`, `queue-timeout`). */
  readonly shed: Readonly<Record<string, number>>;
  /** Connections the server closed since start, per reason (`first-byte-timeout`, `idle-h2c`, `max-connections`). */
  readonly closedConnections: Readonly<Record<string, number>>;
  /** Open TCP connections on the port. */
  readonly connections: number;
}

export interface Host {
  readonly app: FastifyInstance;
  /** Listens on the group's address (or `port` when given, 0 for any) and returns the bound port. */
  listen(port?: number): Promise<number>;
  close(): Promise<void>;
  stats(): Promise<HostStats>;
}

/**
 * Serves the components mounted in a runtime as Connect, gRPC and gRPC-Web routes, over HTTP/1.1
 * and h2c on one port, with a health endpoint and graceful shutdown.
 */
export async function createHost(options: HostOptions): Promise<Host> {
  const { runtime, logger } = options;
  const readMaxBytes = options.readMaxBytes ?? 1024 * 1024;
  const limits = resolveHostLimits(options.limits);
  const corsOrigins = new Set((options.corsOrigins ?? defaultCorsOrigins()).map((o) => normalizeOrigin(o, "corsOrigins")));
  const exposedHeaders = [...connectCors.exposedHeaders];
  const corsHeaders = (origin: string | undefined): Record<string, string> =>
    origin !== undefined && corsOrigins.has(origin)
      ? { "access-control-allow-origin": origin, vary: "Origin", "access-control-expose-headers": exposedHeaders.join(", ") }
      : {};
  let server: DualProtocolServer | undefined;
  // RPCs are served in front of Fastify (connect-routes.ts); Fastify gets everything else.
  const rpc = createConnectRoutes({
    readMaxBytes,
    shutdownTimeoutMs: 2000,
    corsHeaders,
    logger,
    services: runtime.mounted.map(({ definition, impl }) => ({ service: definition.service, impl })),
  });
  const app = fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: false, // the dual-protocol server drains its own connections
    bodyLimit: readMaxBytes,
    http2: true,
    serverFactory: (fastifyHandler) => {
      const handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, body?: Uint8Array): void => {
        if (!rpc.handle(req, res, body)) (fastifyHandler as (req: unknown, res: unknown) => void)(req, res);
      };
      server = createDualProtocolServer(handler, {
        limits,
        logger,
        isCall: rpc.isCall,
        readMaxBytes,
        corsHeaders,
        ...(options.logIntervalMs === undefined ? {} : { logIntervalMs: options.logIntervalMs }),
        ...(options.onUpgrade ? { onUpgrade: options.onUpgrade } : {}),
      });
      return server as never;
    },
  }) as unknown as FastifyInstance;

  await app.register(fastifyCors, {
    // Only listed origins are echoed back; others get no access-control-allow-origin.
    origin: (origin, cb) => cb(null, origin !== undefined && corsOrigins.has(origin)),
    methods: [...connectCors.allowedMethods],
    allowedHeaders: [...connectCors.allowedHeaders, "Authorization"],
    exposedHeaders,
    maxAge: 7200,
  });
  app.addHook("preClose", (done) => {
    rpc.shutdown();
    done();
  });
  app.get("/healthz", async () => ({
    status: "ok",
    topology: runtime.topology.name,
    group: runtime.group.name,
    components: runtime.mounted.map((m) => m.definition.name),
  }));
  await options.extend?.(app);

  return {
    app,
    async listen(port?: number) {
      const { host, port: groupPort } = parseAddress(runtime.group.address);
      await app.listen({ host, port: port ?? groupPort });
      const address = app.server.address();
      if (address === null || typeof address === "string") throw new Error("server has no TCP address");
      return address.port;
    },
    async close() {
      await app.close();
    },
    async stats() {
      const connections = await new Promise<number>((resolve) => app.server.getConnections((_err, n) => resolve(n ?? 0)));
      return {
        inFlight: server?.admission.inFlight() ?? 0,
        queued: server?.admission.queued() ?? 0,
        receiving: server?.admission.receiving() ?? 0,
        shed: server?.shed.totals() ?? {},
        closedConnections: server?.closedConnections.totals() ?? {},
        connections,
      };
    },
  };
}
