import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePorts } from "@flaplab/testkit";

export const REPO = resolve(import.meta.dirname, "../../..");

/** A copy of a repository topology with every group moved to a free loopback port. */
export async function topologyOnFreePorts(name: string): Promise<{ file: string; dir: string; addresses: Record<string, string> }> {
  const json = JSON.parse(await readFile(join(REPO, "topologies", `${name}.json`), "utf8")) as {
    name: string;
    groups: Record<string, { address: string; streamAddress?: string }>;
    web?: { address: string };
  };
  const groups = Object.values(json.groups);
  const ports = await freePorts(2 * groups.length + 1);
  const addresses: Record<string, string> = {};
  Object.entries(json.groups).forEach(([g, spec], i) => {
    spec.address = `127.0.0.1:${ports[2 * i]}`;
    spec.streamAddress = `127.0.0.1:${ports[2 * i + 1]}`;
    addresses[g] = spec.address;
  });
  json.web = { address: `127.0.0.1:${ports[2 * groups.length]}` };
  addresses["web"] = json.web.address;
  const dir = await mkdtemp(join(tmpdir(), `flaplab-${name}-`));
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(json, null, 2));
  return { file, dir, addresses };
}

/** Call records of a call-log file. */
export async function readCallLog(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r["msg"] === "rpc");
}
