import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/** Ports this process has handed out: never handed out twice, even once their listener is gone. */
const handedOut = new Set<number>();

/**
 * `count` distinct free TCP ports on 127.0.0.1, none in `avoid` and none handed out before by this
 * process. The listeners are held open together while they are picked, so the ports differ.
 */
export async function freePorts(count: number, avoid: ReadonlySet<number> = new Set()): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    // Bounded: each round holds one more listener, so a port seen once is not offered again.
    for (let round = 0; ports.length < count && round < count + 1000; round++) {
      const s = createServer();
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, "127.0.0.1", resolve);
      });
      held.push(s);
      const port = (s.address() as AddressInfo).port;
      if (!avoid.has(port) && !handedOut.has(port)) ports.push(port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
  if (ports.length < count) throw new Error(`found only ${ports.length} of ${count} free loopback ports`);
  for (const p of ports) handedOut.add(p);
  return ports;
}

/** One free loopback port (see freePorts). */
export async function freePort(avoid?: ReadonlySet<number>): Promise<number> {
  const [port] = await freePorts(1, avoid);
  return port!;
}

export interface TopologyCopy {
  /** The copy's file, in `dir`. */
  readonly file: string;
  /** A new temporary folder of its own (the caller removes it). */
  readonly dir: string;
  /** Each group's new address, and the web client's under "web". */
  readonly addresses: Readonly<Record<string, string>>;
}

/**
 * A copy of the topology file `file` with every group's address and stream address, and the web
 * client's, moved to free loopback ports, so a deployment can run beside another.
 */
export async function topologyOnFreePorts(file: string): Promise<TopologyCopy> {
  const json = JSON.parse(await readFile(file, "utf8")) as {
    groups: Record<string, { address: string; streamAddress?: string }>;
    web?: { address: string };
  };
  const groups = Object.entries(json.groups);
  const ports = await freePorts(2 * groups.length + 1);
  const addresses: Record<string, string> = {};
  groups.forEach(([name, spec], i) => {
    spec.address = `127.0.0.1:${ports[2 * i]}`;
    spec.streamAddress = `127.0.0.1:${ports[2 * i + 1]}`;
    addresses[name] = spec.address;
  });
  json.web = { address: `127.0.0.1:${ports[2 * groups.length]}` };
  addresses["web"] = json.web.address;
  const name = basename(file, ".json");
  const dir = await mkdtemp(join(tmpdir(), `flaplab-${name}-`));
  const copy = join(dir, `${name}.json`);
  await writeFile(copy, JSON.stringify(json, null, 2));
  return { file: copy, dir, addresses };
}
