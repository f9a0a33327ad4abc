import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, dirs, playOneStart, startDev } from "./dev-harness.js";
import { readCallLog, topologyOnFreePorts } from "./helpers.js";

// `pnpm dev microservices`: six processes, their calls networked, a killed group restarted.
afterEach(cleanUp);

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
});
