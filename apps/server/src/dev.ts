// Runs a whole topology on this machine: one child process per process group, supervised together.
// Usage: pnpm dev <topology|file.json> [--data-dir <dir>]
import { spawn, type ChildProcess } from "node:child_process";
import { readdir } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { loadOrCreateKeys } from "@flaplab/identity";
import { loadTopology, type GroupSpec, type Topology } from "@flaplab/runtime";
import { DEFAULT_DATA_DIR, TOPOLOGIES_DIR, userPath } from "./paths.js";

const MAIN = resolve(import.meta.dirname, "main.ts");
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

function say(line: string): void {
  process.stdout.write(`[dev] ${line}\n`);
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { "data-dir": { type: "string", default: process.env["FLAPLAB_DATA_DIR"] } },
  });
  const which = positionals[0];
  if (!which) {
    const known = (await readdir(TOPOLOGIES_DIR)).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5));
    process.stderr.write(`usage: pnpm dev <topology> [--data-dir <dir>]\ntopologies: ${known.join(", ")}\n`);
    return 2;
  }
  const topology = await loadTopology(
    which.includes("/") || which.endsWith(".json") ? userPath(which) : which,
    TOPOLOGIES_DIR,
  );
  const dataDir = values["data-dir"] ? userPath(values["data-dir"]) : DEFAULT_DATA_DIR;
  await loadOrCreateKeys(dataDir); // before the children start, so they share one key pair

  const width = Math.max(...topology.groups.map((g) => g.name.length));
  const children = new Map<string, ChildProcess>();
  let stopping = false;
  let exitCode = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  const stopAll = (reason: string, code: number): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    say(`stopping ${children.size} process(es): ${reason}`);
    for (const child of children.values()) child.kill("SIGTERM");
    setTimeout(() => {
      for (const child of children.values()) child.kill("SIGKILL");
    }, STOP_GRACE_MS).unref();
  };

  for (const group of topology.groups) {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", MAIN, "--topology", topology.source ?? which, "--group", group.name, "--data-dir", dataDir],
      { stdio: ["ignore", "pipe", "pipe"], env: process.env },
    );
    children.set(group.name, child);
    const prefix = `[${group.name.padEnd(width)}] `;
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => process.stdout.write(prefix + line + "\n"));
    }
    child.on("exit", (code, signal) => {
      children.delete(group.name);
      if (!stopping) stopAll(`${group.name} exited (${signal ?? `code ${code}`})`, 1);
      if (children.size === 0) resolveDone();
    });
  }
  process.on("SIGINT", () => stopAll("interrupted", 0));
  process.on("SIGTERM", () => stopAll("terminated", 0));

  const ready = await Promise.race([waitReady(topology.groups), done.then(() => false)]);
  if (ready && !stopping) {
    say(`${topology.name} is up: ${topology.groups.length} process(es); data in ${dataDir}`);
    for (const g of topology.groups) {
      say(`  ${g.name.padEnd(width)}  ${g.publicUrl}  ${g.components.join(", ") || "(no components)"}`);
    }
    say("Ctrl-C stops everything.");
  } else if (!stopping) {
    stopAll(`not healthy after ${READY_TIMEOUT_MS / 1000} s`, 1);
  }
  await done;
  return exitCode;
}

async function waitReady(groups: readonly GroupSpec[]): Promise<boolean> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (const g of groups) {
    for (;;) {
      try {
        const res = await fetch(`http://${g.address}/healthz`, { signal: AbortSignal.timeout(1000) });
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return true;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[dev] ${(err as Error).message}\n`);
    process.exit(2);
  },
);
