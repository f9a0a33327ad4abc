import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "../src/server.js";
import { topologyOnFreePorts } from "./helpers.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("a server whose score database cannot be reached", () => {
  it("refuses to start with a clear error and closes the stores it had opened", async () => {
    const topo = await topologyOnFreePorts("monolith");
    dirs.push(topo.dir);
    const dataDir = join(topo.dir, "data");
    await expect(
      startServer({
        topology: await loadTopology(topo.file),
        group: "monolith",
        dataDir,
        logger: pino({ level: "silent" }),
        port: 0,
        streamPort: 0,
        // Port 1 on loopback: nothing listens there.
        scoreDatabaseUrl: "postgres://flaplab:secret@127.0.0.1:1/scores",
      }),
    ).rejects.toThrow(/cannot reach the score database 127\.0\.0\.1:1\/scores/);
    // The auth store (opened before score) was opened, then closed: SQLite removes the WAL file
    // when the last connection to the database closes.
    expect(existsSync(join(dataDir, "auth.sqlite"))).toBe(true);
    expect(existsSync(join(dataDir, "auth.sqlite-wal"))).toBe(false);
  }, 30_000);
});
