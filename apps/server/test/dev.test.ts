import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseAddress } from "@flaplab/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, DEV, dirs, playOneStart, startDev } from "./dev-harness.js";
import { readCallLog, topologyOnFreePorts } from "./helpers.js";

// `pnpm dev <topology>` as a user runs it, with the monolith. Microservices, restarts and crash
// loops are in dev.slow.test.ts (the full tier).
afterEach(cleanUp);

describe("pnpm dev", () => {
  it("monolith: one process; StartGame logs initiator→worldgen and initiator→engine as direct calls", async () => {
    const topo = await topologyOnFreePorts("monolith");
    dirs.push(topo.dir);
    const dataDir = join(topo.dir, "data");
    const run = await startDev(topo.file, dataDir);
    const res = await playOneStart(topo.addresses, "monolith", "monolith");
    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    const records = await readCallLog(join(dataDir, "logs", "rpc-monolith-monolith.ndjson"));
    const mine = records.filter((r) => r["gameId"] === res.gameId && r["side"] === "client");
    expect(mine.map((r) => [r["src"], r["dst"], r["mode"], r["protocol"]])).toEqual([
      ["initiator", "worldgen", "direct", "in-process"],
      ["initiator", "engine", "direct", "in-process"],
    ]);
  }, 120_000);

  it("stops every process when whoever started it dies without a signal to it", async () => {
    const topo = await topologyOnFreePorts("monolith");
    dirs.push(topo.dir);
    // A parent that starts `pnpm dev` and is then SIGKILLed, as a crashed wrapper would be.
    const script = `const { spawn } = require("node:child_process");
      const c = spawn(process.execPath, ["--import", "tsx", ${JSON.stringify(DEV)}, ${JSON.stringify(topo.file)}, "--data-dir", ${JSON.stringify(join(topo.dir, "data"))}, "--no-web"], { stdio: ["ignore", "inherit", "inherit"] });
      setInterval(() => {}, 1000);`;
    const wrapper = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    const up = new Promise<void>((ok) => {
      for (const s of [wrapper.stdout!, wrapper.stderr!]) {
        createInterface({ input: s }).on("line", (line) => {
          lines.push(line);
          if (/\[dev\] .* is up/.test(line)) ok();
        });
      }
    });
    await up;
    const health = `http://${topo.addresses["monolith"]}/healthz`;
    expect((await fetch(health)).ok).toBe(true);
    wrapper.kill("SIGKILL");
    let stopped = false;
    for (let i = 0; i < 150 && !stopped; i++) {
      await new Promise((r) => setTimeout(r, 100));
      stopped = await fetch(health).then(() => false, () => true);
    }
    expect(stopped, lines.join("\n")).toBe(true);
  }, 60_000);

  it("refuses to start over ports that are already taken, naming them", async () => {
    const topo = await topologyOnFreePorts("microservices");
    dirs.push(topo.dir);
    const taken = createServer();
    const address = topo.addresses["score"]!;
    await new Promise<void>((r) => taken.listen(parseAddress(address).port, "127.0.0.1", r));
    try {
      const child = spawn(process.execPath, ["--import", "tsx", DEV, topo.file, "--data-dir", join(topo.dir, "data"), "--no-web"], { stdio: ["ignore", "pipe", "pipe"] });
      let err = "";
      child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
      const code = await new Promise((r) => child.on("exit", r));
      expect(code).toBe(2);
      expect(err).toContain(`${address} (score) is already in use`);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  }, 30_000);

  it("names the known topologies for an unknown one", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", DEV, "nosuch"], { stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise((r) => child.on("exit", r));
    expect(code).toBe(2);
    expect(err).toMatch(/no topology file at .*nosuch\.json/);
  }, 30_000);
});
