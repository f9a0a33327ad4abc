// The monolith under attack, in a process of its own so that a crash is seen (its exit) instead of
// taking the fuzzer down. It starts as the attack tests' startMonolith() does — the repository's
// monolith topology moved to free loopback ports, startServer() with the topology's directory as
// data dir — without their vitest helpers. With FUZZ_DATA_DIR set it starts the same monolith again
// on the data dir (and ports) of an earlier start, after a crash.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { startServer } from "../../apps/server/src/server.js";

const REPO = resolve(import.meta.dirname, "../..");

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function monolithOnFreePorts(): Promise<string> {
  const json = JSON.parse(await readFile(join(REPO, "topologies", "monolith.json"), "utf8")) as {
    groups: Record<string, { address: string; streamAddress?: string }>;
    web?: { address: string };
  };
  for (const spec of Object.values(json.groups)) {
    spec.address = `127.0.0.1:${await freePort()}`;
    spec.streamAddress = `127.0.0.1:${await freePort()}`;
  }
  json.web = { address: `127.0.0.1:${await freePort()}` };
  const dir = await mkdtemp(join(tmpdir(), "flaplab-fuzz-monolith-"));
  await writeFile(join(dir, "monolith.json"), JSON.stringify(json, null, 2));
  return dir;
}

const dir = process.env["FUZZ_DATA_DIR"] || (await monolithOnFreePorts());
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
