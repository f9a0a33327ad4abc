import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { topologyOnFreePorts as copyOnFreePorts } from "@flaplab/ports";

const DEV = resolve(import.meta.dirname, "../../../apps/server/src/dev.ts");
const TOPOLOGIES = resolve(import.meta.dirname, "../../../topologies");

/**
 * A copy of the repository topology `name` in a new temporary folder, with every address (and the
 * web client's) on a free loopback port, so a deployment can run beside `pnpm dev`.
 */
export async function topologyOnFreePorts(name: string): Promise<{ dir: string; file: string }> {
  const { dir, file } = await copyOnFreePorts(join(TOPOLOGIES, `${name}.json`));
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
