import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LoadStartError, playUnderLoad } from "../../src/study/load-levels.js";
import type { RunningDeployment } from "../../src/study/deployment.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("a level whose load cannot start", () => {
  it("is refused before any Chromium run, with the load's reason", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    // Only what the level reads of a deployment: where auth and the initiator answer, and its CPU.
    const deployment = { emulation: undefined, urlOf: () => url, cpuTimes: async () => [] } as unknown as RunningDeployment;
    const dir = await mkdtemp(join(tmpdir(), "flaplab-level-"));
    dirs.push(dir);
    let played = false;
    const lines: string[] = [];
    const level = playUnderLoad({ deployment, folder: "nowhere@2", runFolders: ["nowhere@2"], level: 2, workers: 1, durationMs: 10_000, dir: join(dir, "nowhere@2"), log: (l) => lines.push(l) }, async () => {
      played = true;
    });
    await expect(level).rejects.toThrow(LoadStartError);
    await expect(level).rejects.toThrow(/the load of 2 players on nowhere@2 did not start: the warm-up failed: .*registering/);
    expect(played).toBe(false);
    // Nothing is written for a level that was not measured.
    expect(await readdir(dir)).toEqual([]);
  }, 60_000);
});
