import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../../..");

/** A free loopback port not handed out before in this process. */
const handedOut = new Set<number>();
async function freePort(): Promise<number> {
  for (;;) {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** A copy of a repository topology with every address (and the web client) on a free loopback port. */
export async function topologyOnFreePorts(name: string): Promise<{ dir: string; file: string }> {
  const json = JSON.parse(await readFile(join(REPO, "topologies", `${name}.json`), "utf8")) as {
    groups: Record<string, { address: string; streamAddress?: string }>;
    web?: { address: string };
  };
  for (const g of Object.values(json.groups)) {
    g.address = `127.0.0.1:${await freePort()}`;
    g.streamAddress = `127.0.0.1:${await freePort()}`;
  }
  json.web = { address: `127.0.0.1:${await freePort()}` };
  const dir = await mkdtemp(join(tmpdir(), `flaplab-${name}-`));
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(json));
  return { dir, file };
}
