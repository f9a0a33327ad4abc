import { cors as connectCors } from "@connectrpc/connect";
import fastifyCors from "@fastify/cors";
import type { Runtime } from "@flaplab/runtime";
import { fastify, LogController, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { registerConnectRoutes } from "./connect-routes.js";
import { createDualProtocolServer } from "./dual-protocol-server.js";

export interface HostOptions {
  readonly runtime: Runtime;
  readonly logger: Logger;
  /** Largest request body accepted (default: the runtime's, 1 MiB). */
  readonly readMaxBytes?: number;
  /** Extra routes (e.g. streams) registered on the same Fastify instance. */
  readonly extend?: (app: FastifyInstance) => Promise<void> | void;
}

export interface Host {
  readonly app: FastifyInstance;
  /** Listens on the group's address (or `port` when given, 0 for any) and returns the bound port. */
  listen(port?: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Serves the components mounted in a runtime as Connect, gRPC and gRPC-Web routes, over HTTP/1.1
 * and h2c on one port, with a health endpoint and graceful shutdown.
 */
export async function createHost(options: HostOptions): Promise<Host> {
  const { runtime, logger } = options;
  const readMaxBytes = options.readMaxBytes ?? 1024 * 1024;
  const app = fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: false, // the dual-protocol server drains its own connections
    bodyLimit: readMaxBytes,
    http2: true,
    serverFactory: (handler) => createDualProtocolServer(handler as never) as never,
  }) as unknown as FastifyInstance;

  await app.register(fastifyCors, {
    origin: true,
    methods: [...connectCors.allowedMethods],
    allowedHeaders: [...connectCors.allowedHeaders, "Authorization"],
    exposedHeaders: [...connectCors.exposedHeaders],
    maxAge: 7200,
  });
  await registerConnectRoutes(app, {
    readMaxBytes,
    shutdownTimeoutMs: 2000,
    routes: (router) => {
      for (const { definition, impl } of runtime.mounted) router.service(definition.service, impl);
    },
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
      const [host, groupPort] = splitAddress(runtime.group.address);
      await app.listen({ host, port: port ?? groupPort });
      const address = app.server.address();
      if (address === null || typeof address === "string") throw new Error("server has no TCP address");
      return address.port;
    },
    async close() {
      await app.close();
    },
  };
}

function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(":");
  return [address.slice(0, i), Number(address.slice(i + 1))];
}
