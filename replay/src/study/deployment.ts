import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

const DEV = resolve(import.meta.dirname, "../../../apps/server/src/dev.ts");
const TOPOLOGIES = resolve(import.meta.dirname, "../../../topologies");

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

/**
 * A copy of the repository topology `name` in a new temporary folder, with every address (and the
 * web client's) on a free loopback port, so a deployment can run beside `pnpm dev`.
 */
export async function topologyOnFreePorts(name: string): Promise<{ dir: string; file: string }> {
  const json = JSON.parse(await readFile(join(TOPOLOGIES, `${name}.json`), "utf8")) as {
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

/** A deployment started with `pnpm dev`, until `stop()`. */
export interface RunningDeployment {
  readonly topology: string;
  readonly webUrl: string;
  readonly logsDir: string;
  readonly lines: readonly string[];
  stop(): Promise<void>;
}

/**
 * Starts `pnpm dev <topology> --web-build` (with latency emulation where the topology places groups
 * in regions). The web client is a production build, so editing sources while a study runs
 * neither reloads the page mid-game nor changes what is measured.
 */
export async function startDeployment(topology: string, dataDir: string, onLine?: (line: string) => void): Promise<RunningDeployment> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", DEV, topology, "--data-dir", dataDir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let webUrl = "";
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  await new Promise<void>((ok, fail) => {
    for (const s of [child.stdout!, child.stderr!]) {
      createInterface({ input: s }).on("line", (line) => {
        lines.push(line);
        if (lines.length > 2000) lines.shift();
        onLine?.(line);
        const open = /\[dev\] Open (\S+) in a browser/.exec(line);
        if (open) webUrl = open[1]!;
        if (/\[dev\] .* is up/.test(line)) setTimeout(ok, 200); // the "Open …" line follows
      });
    }
    void exited.then((code) =>
      fail(new Error(`pnpm dev ${topology} exited (${code}) before it was up:\n${lines.slice(-15).join("\n")}`)),
    );
  });
  if (!webUrl) throw new Error(`pnpm dev ${topology} did not print the web URL`);
  return {
    topology,
    webUrl,
    logsDir: resolve(dataDir, "logs"),
    lines,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
