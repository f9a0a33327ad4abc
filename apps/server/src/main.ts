// Starts one process group of a topology.
// Usage: flaplab-server --topology <name|file> [--group <name>] [--data-dir <dir>] [--port <n>]
import { parseArgs } from "node:util";
import { loadTopology, TopologyError } from "@flaplab/runtime";
import { readText } from "@flaplab/settings";
import { startTracing } from "@flaplab/telemetry";
import { pino } from "pino";
import { DEFAULT_DATA_DIR, TOPOLOGIES_DIR, userPath } from "./paths.js";
import { startServer } from "./server.js";
import { DATA_DIR, GROUP, SCORE_DATABASE_URL, TOPOLOGY } from "./settings.js";

// Synchronous: the last lines before an exit (a startup failure) must reach the terminal.
const logger = pino({ base: { pid: process.pid } }, pino.destination({ sync: true }));
/** The parent this process started with (1, or a container's init: none to watch). */
const startedBy = process.ppid;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      topology: { type: "string", default: readText(process.env, TOPOLOGY) ?? "monolith" },
      group: { type: "string", default: readText(process.env, GROUP) },
      "data-dir": { type: "string", default: readText(process.env, DATA_DIR) },
      port: { type: "string" },
    },
  });
  const topology = await loadTopology(
    values.topology.includes("/") || values.topology.endsWith(".json") ? userPath(values.topology) : values.topology,
    TOPOLOGIES_DIR,
  );
  let group = values.group;
  if (group === undefined) {
    if (topology.groups.length !== 1) {
      throw new TopologyError(
        `topology ${topology.name} has ${topology.groups.length} groups; choose one with --group (${topology.groups.map((g) => g.name).join(", ")})`,
      );
    }
    group = topology.groups[0]!.name;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`--port must be a port number, got ${values.port}`);
  }
  const scoreDatabaseUrl = readText(process.env, SCORE_DATABASE_URL);
  // On only when the standard OTEL_* environment asks for traces (packages/platform/telemetry).
  const tracing = await startTracing({ group, logger: logger.child({ group }) });
  const server = await startServer({
    topology,
    group,
    dataDir: values["data-dir"] ? userPath(values["data-dir"]) : DEFAULT_DATA_DIR,
    logger: logger.child({ group }),
    ...(port === undefined ? {} : { port }),
    // Not an option: a URL with a password does not belong on a command line.
    ...(scoreDatabaseUrl ? { scoreDatabaseUrl } : {}),
    tracing,
  });
  let signals = 0;
  const shutdown = (signal: string): void => {
    if (++signals > 1) process.exit(1);
    logger.info({ event: "shutdown", signal }, "shutting down");
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  // Started by a parent (pnpm dev, a test run): when it is gone, even killed, the kernel hands this
  // process to another parent; then it stops too, instead of holding its ports as an orphan.
  if (startedBy > 1) {
    const watch = (): void => {
      if (process.ppid !== startedBy) shutdown("parent-gone");
    };
    watch(); // it may have gone while this process was starting
    setInterval(watch, 500).unref();
  }
}

main().catch((err: unknown) => {
  logger.fatal({ event: "startup-failed", err: { message: (err as Error).message } }, (err as Error).message);
  process.exit(1);
});
