import { readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort, freePorts, topologyOnFreePorts } from "../src/index.js";

const TOPOLOGIES = resolve(import.meta.dirname, "../../../../topologies");

async function canListen(port: number): Promise<boolean> {
  const s = createServer();
  const ok = await new Promise<boolean>((r) => {
    s.once("error", () => r(false));
    s.listen(port, "127.0.0.1", () => r(true));
  });
  if (ok) await new Promise((r) => s.close(r));
  return ok;
}

describe("freePorts", () => {
  it("gives distinct ports that can be listened on, never the same twice in a process, none it was told to avoid", async () => {
    const a = await freePorts(20);
    expect(new Set(a).size).toBe(20);
    for (const p of a) expect(await canListen(p)).toBe(true);
    const b = await freePorts(20, new Set(a));
    expect(b.filter((p) => a.includes(p))).toEqual([]);
    const c = await freePort();
    expect([...a, ...b]).not.toContain(c);
  });

  it("skips a port in use", async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const taken = (s.address() as { port: number }).port;
    try {
      expect(await freePorts(50)).not.toContain(taken);
    } finally {
      await new Promise((r) => s.close(r));
    }
  });
});

describe("topologyOnFreePorts", () => {
  it("copies a topology with every group, stream and the web client on its own free port", async () => {
    const copy = await topologyOnFreePorts(join(TOPOLOGIES, "microservices.json"));
    try {
      const json = JSON.parse(await readFile(copy.file, "utf8")) as {
        name: string;
        groups: Record<string, { address: string; streamAddress: string; components: string[] }>;
        web: { address: string };
      };
      const original = JSON.parse(await readFile(join(TOPOLOGIES, "microservices.json"), "utf8")) as { groups: Record<string, { components: string[] }> };
      expect(json.name).toBe("microservices");
      expect(Object.keys(json.groups)).toEqual(Object.keys(original.groups));
      for (const [g, spec] of Object.entries(json.groups)) {
        expect(spec.components).toEqual(original.groups[g]!.components);
        expect(copy.addresses[g]).toBe(spec.address);
      }
      const all = [...Object.values(json.groups).flatMap((g) => [g.address, g.streamAddress]), json.web.address];
      expect(new Set(all).size).toBe(all.length);
      for (const a of all) expect(a).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(copy.addresses["web"]).toBe(json.web.address);
    } finally {
      await rm(copy.dir, { recursive: true, force: true });
    }
  });
});
