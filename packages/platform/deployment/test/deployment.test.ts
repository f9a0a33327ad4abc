import { readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { parseAddress } from "@flaplab/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { type Deployment, type DeploymentEvent, RestartPolicy, repositoryTopologyOnFreePorts, startDeployment } from "../src/index.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function copy(name: string) {
  const topo = await repositoryTopologyOnFreePorts(name);
  cleanups.push(() => rm(topo.dir, { recursive: true, force: true }));
  return topo;
}

async function answers(url: string): Promise<boolean> {
  return fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.ok,
    () => false,
  );
}

describe("startDeployment", () => {
  it("starts a process per group, is ready once every one listens, and stops them all", async () => {
    const topo = await copy("microservices");
    const events: DeploymentEvent["type"][] = [];
    const d: Deployment = await startDeployment(topo.file, { dataDir: join(topo.dir, "data"), web: "none", onEvent: (e) => events.push(e.type) });
    cleanups.push(() => d.stop());
    await d.ready;
    expect(events).toEqual(["ready"]);
    expect(Object.keys(d.endpoints).sort()).toEqual(["auth", "engine", "initiator", "music", "score", "worldgen"]);
    expect(d.endpoints["engine"]!.address).toEqual(parseAddress(topo.addresses["engine"]!));
    expect(d.endpoints["engine"]!.streamUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(d.endpoints["score"]!.streamUrl).toBeUndefined();
    expect(d.urlOf("score")).toBe(`http://${topo.addresses["score"]}`);
    expect(d.webUrl).toBeUndefined();
    const pids = Object.keys(d.endpoints).map((g) => d.pidOf(g));
    expect(new Set(pids).size).toBe(6);
    // The engine's process starts with the engine's Node flags (its small young generation); the others without.
    const argsOf = async (group: string) => (await readFile(`/proc/${d.pidOf(group)}/cmdline`, "utf8")).split("\0");
    expect(await argsOf("engine")).toContain("--max-semi-space-size=2");
    expect((await argsOf("auth")).some((a) => a.startsWith("--max-semi-space-size"))).toBe(false);
    for (const e of Object.values(d.endpoints)) expect(await answers(e.url)).toBe(true);

    expect(await d.stop()).toBe(0);
    expect(events).toEqual(["ready", "stopping"]);
    for (const e of Object.values(d.endpoints)) expect(await answers(e.url)).toBe(false);
    for (const pid of pids) expect(() => process.kill(pid!, 0)).toThrow();
  }, 60_000);

  it("refuses a topology whose port is taken, before starting anything", async () => {
    const topo = await copy("monolith");
    const taken = createServer();
    const { port } = parseAddress(topo.addresses["monolith"]!);
    await new Promise<void>((r) => taken.listen(port, "127.0.0.1", r));
    cleanups.push(() => new Promise((r) => taken.close(r)));
    await expect(startDeployment(topo.file, { dataDir: join(topo.dir, "data"), web: "none" })).rejects.toThrow(
      `127.0.0.1:${port} (monolith) is already in use`,
    );
  });

  it("rejects `ready` and stops when the processes do not listen in time", async () => {
    const topo = await copy("monolith");
    const d = await startDeployment(topo.file, { dataDir: join(topo.dir, "data"), web: "none", readyTimeoutMs: 1 });
    await expect(d.ready).rejects.toThrow(/monolith did not come up: not listening after 0\.001 s/);
    expect(await d.stopped).toBe(1);
    expect(await answers(`http://${topo.addresses["monolith"]}`)).toBe(false);
  }, 30_000);

  it("names the known topology folder for an unknown topology", async () => {
    await expect(startDeployment("no-such-topology", { dataDir: "/nonexistent" })).rejects.toThrow(/no topology file at .*no-such-topology\.json/);
  });
});

describe("RestartPolicy", () => {
  it("doubles the delay per restart within a minute and calls the next one past the limit a crash loop", () => {
    let now = 0;
    const policy = new RestartPolicy(3, () => now);
    expect([policy.next("a"), policy.next("a"), policy.next("a")]).toEqual([500, 1000, 2000]);
    expect(policy.next("a")).toBeUndefined();
    // Another process has its own count; a minute later the first one starts over.
    expect(policy.next("b")).toBe(500);
    now = 60_001;
    expect(policy.next("a")).toBe(500);
  });
});
