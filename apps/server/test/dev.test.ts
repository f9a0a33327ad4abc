import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { parseAddress } from "@flaplab/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { readCallLog, topologyOnFreePorts } from "./helpers.js";

// `pnpm dev <topology>` as a user runs it: the supervisor, its children, their logs.
const DEV = resolve(import.meta.dirname, "../src/dev.ts");

interface DevRun {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

const running: DevRun[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const run of running.splice(0)) {
    run.child.kill("SIGKILL");
  }
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function startDev(topologyFile: string, dataDir: string, env: Record<string, string> = {}): Promise<DevRun> {
  const child = spawn(process.execPath, ["--import", "tsx", DEV, topologyFile, "--data-dir", dataDir, "--no-web"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const run = { child, lines, exited };
  running.push(run);
  const up = new Promise<void>((resolveUp, reject) => {
    for (const s of [child.stdout!, child.stderr!]) {
      createInterface({ input: s }).on("line", (line) => {
        lines.push(line);
        if (/\[dev\] .* is up/.test(line)) resolveUp();
      });
    }
    void exited.then((code) => reject(new Error(`dev exited early (${code}):\n${lines.join("\n")}`)));
  });
  await up;
  return run;
}

async function playOneStart(addresses: Record<string, string>, authGroup: string, initiatorGroup: string) {
  const auth = createClient(AuthService, createConnectTransport({ baseUrl: `http://${addresses[authGroup]}`, httpVersion: "1.1" }));
  const { session } = await auth.register({ username: "dev-user", password: "long enough password" });
  const initiator = createClient(
    InitiatorService,
    createConnectTransport({ baseUrl: `http://${addresses[initiatorGroup]}`, httpVersion: "1.1" }),
  );
  return initiator.startGame({ seed: 6977347407732442987n }, { headers: { authorization: `Bearer ${session!.token}` } });
}

describe("pnpm dev", () => {
  it("microservices: six processes; StartGame logs initiator→worldgen and initiator→engine as networked calls", async () => {
    const topo = await topologyOnFreePorts("microservices");
    dirs.push(topo.dir);
    const dataDir = join(topo.dir, "data");
    const run = await startDev(topo.file, dataDir);

    const listeningPids = () =>
      new Set(
        run.lines
          .filter((l) => l.includes('"event":"listening"'))
          .map((l) => (JSON.parse(l.slice(l.indexOf("{"))) as { pid: number }).pid),
      );
    // Health answers as soon as a group's Connect port is up; its log line follows its stream server.
    for (let i = 0; i < 100 && listeningPids().size < 6; i++) await new Promise((r) => setTimeout(r, 100));
    expect(listeningPids().size).toBe(6);
    expect(run.lines.some((l) => l.startsWith("[engine   ] "))).toBe(true);

    const res = await playOneStart(topo.addresses, "auth", "initiator");
    expect(res.pipesInView).toBe(5);

    run.child.kill("SIGINT");
    expect(await run.exited).toBe(0);
    const records = await readCallLog(join(dataDir, "logs", "rpc-microservices-initiator.ndjson"));
    const mine = records.filter((r) => r["gameId"] === res.gameId && r["side"] === "client");
    expect(mine.map((r) => [r["src"], r["dst"], r["dstVerb"], r["mode"], r["protocol"], r["code"]])).toEqual([
      ["initiator", "worldgen", "GenerateWorld", "networked", "connect+proto", "ok"],
      ["initiator", "engine", "StartGame", "networked", "connect+proto", "ok"],
    ]);
  }, 120_000);

  it("monolith: one process; the same StartGame logs both calls as direct", async () => {
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

  it("restarts a group killed with SIGKILL and leaves the others alone; a crash-looping group stops everything", async () => {
    const topo = await topologyOnFreePorts("microservices");
    dirs.push(topo.dir);
    // One restart a minute, so that the second kill is a crash loop.
    const run = await startDev(topo.file, join(topo.dir, "data"), { FLAPLAB_DEV_MAX_RESTARTS_PER_MINUTE: "1" });
    const listening = () =>
      run.lines
        .filter((l) => l.includes('"event":"listening"'))
        .map((l) => ({ group: l.slice(1, l.indexOf("]")).trim(), pid: (JSON.parse(l.slice(l.indexOf("{"))) as { pid: number }).pid }));
    const waitFor = async (what: () => boolean, ms: number) => {
      for (let i = 0; i < ms / 100 && !what(); i++) await new Promise((r) => setTimeout(r, 100));
      return what();
    };
    expect(await waitFor(() => listening().length === 6, 10_000)).toBe(true);
    const before = listening();
    const score = before.find((l) => l.group === "score")!;
    process.kill(score.pid, "SIGKILL");

    expect(await waitFor(() => run.lines.some((l) => /\[dev\] group score exited \(SIGKILL\), restarting in \d+ ms/.test(l)), 10_000)).toBe(true);
    expect(await waitFor(() => listening().filter((l) => l.group === "score").length === 2, 30_000)).toBe(true);
    const again = listening().filter((l) => l.group === "score")[1]!;
    expect(again.pid).not.toBe(score.pid);
    expect((await fetch(`http://${topo.addresses["score"]}/healthz`)).ok).toBe(true);
    // The others were not restarted and still answer.
    for (const other of before.filter((l) => l.group !== "score")) {
      expect(() => process.kill(other.pid, 0)).not.toThrow();
      expect((await fetch(`http://${topo.addresses[other.group]}/healthz`)).ok).toBe(true);
    }
    expect(listening()).toHaveLength(7);
    expect(run.child.exitCode).toBe(null);

    process.kill(again.pid, "SIGKILL");
    expect(await run.exited).toBe(1);
    expect(run.lines.some((l) => /\[dev\] stopping .*group score is crash-looping/.test(l))).toBe(true);
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
