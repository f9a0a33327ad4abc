// The monolith under attack, in a process of its own so that a crash is seen (its exit) instead of
// taking the fuzzer down. It starts as the attack tests' startMonolith() does — the repository's
// monolith topology moved to free loopback ports, startServer() with the topology's directory as
// data dir — without their vitest helpers. With FUZZ_DATA_DIR set it starts the same monolith again
// on the data dir (and ports) of an earlier start, after a crash.
import { join, resolve } from "node:path";
import { topologyOnFreePorts } from "@flaplab/ports";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { startServer } from "../../apps/server/src/server.js";

const REPO = resolve(import.meta.dirname, "../..");

const dir = process.env["FUZZ_DATA_DIR"] || (await topologyOnFreePorts(join(REPO, "topologies", "monolith.json"))).dir;
const server = await startServer({
  topology: await loadTopology(join(dir, "monolith.json")),
  group: "monolith",
  dataDir: dir,
  logger: pino({ level: "silent" }),
});
process.stdout.write(`${JSON.stringify({ port: server.port, streamPort: server.streams?.port, dir })}\n`);
process.on("SIGTERM", () => {
  void server.stop().finally(() => process.exit(0));
});
