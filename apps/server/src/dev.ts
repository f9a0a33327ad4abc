// Runs a whole topology on this machine: one child process per process group, supervised together.
// Usage: pnpm dev <topology|file.json> [--data-dir <dir>]
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { loadOrCreateKeys } from "@flaplab/identity";
import { emulate, findToxiproxy, loadRttTable, startToxiproxy, type Emulation, type Toxiproxy } from "@flaplab/netem";
import { freePort } from "@flaplab/ports";
import { groupOf, loadTopology, parseAddress, type Topology } from "@flaplab/runtime";
import { loadOrCreateDevCertificate } from "@flaplab/streams";
import { DEFAULT_DATA_DIR, TOPOLOGIES_DIR, userPath } from "./paths.js";

const MAIN = resolve(import.meta.dirname, "main.ts");
const WEB_SERVE = resolve(import.meta.dirname, "../../web/scripts/serve.ts");
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const PARENT_CHECK_MS = 1_000;
/** A group that dies after the topology is up is restarted after this, doubling per recent restart… */
const RESTART_BASE_MS = 500;
/** …up to this. */
const RESTART_MAX_MS = 10_000;
const RESTART_WINDOW_MS = 60_000;
/** More restarts of one group than this within a minute is a crash loop: everything stops. */
const DEFAULT_MAX_RESTARTS_PER_MINUTE = 5;
const MAX_RESTARTS_ENV = "FLAPLAB_DEV_MAX_RESTARTS_PER_MINUTE";

function say(line: string): void {
  process.stdout.write(`[dev] ${line}\n`);
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      "data-dir": { type: "string", default: process.env["FLAPLAB_DATA_DIR"] },
      "no-web": { type: "boolean", default: false },
      "web-build": { type: "boolean", default: false },
      "no-emulate": { type: "boolean", default: false },
      rtt: { type: "string" },
    },
  });
  const maxRestarts = maxRestartsPerMinute(process.env);
  const which = positionals[0];
  if (!which) {
    const known = (await readdir(TOPOLOGIES_DIR)).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5));
    process.stderr.write(`usage: pnpm dev <topology> [--data-dir <dir>] [--no-web] [--web-build] [--no-emulate] [--rtt <file>]\ntopologies: ${known.join(", ")}\n`);
    return 2;
  }
  const topology = await loadTopology(
    which.includes("/") || which.endsWith(".json") ? userPath(which) : which,
    TOPOLOGIES_DIR,
  );
  const dataDir = values["data-dir"] ? userPath(values["data-dir"]) : DEFAULT_DATA_DIR;
  // Before the children start, so they share one key pair and one stream certificate.
  await loadOrCreateKeys(dataDir);
  const streamHosts = topology.groups.map((g) => parseAddress(g.streamAddress).host);
  const certificate = await loadOrCreateDevCertificate(join(dataDir, "tls"), streamHosts);
  const withWeb = !values["no-web"];
  // A second `pnpm dev` of the same topology would otherwise find the first one's servers healthy.
  await assertPortsFree([
    ...topology.groups.flatMap((g) => [
      { who: g.name, address: g.address },
      { who: `${g.name} streams`, address: g.streamAddress },
    ]),
    ...(withWeb ? [{ who: "web", address: topology.web.address }] : []),
  ]);

  // Groups placed in real regions get the RTT of each edge put on the wire by toxiproxy.
  let emulation: Emulation | undefined;
  let toxiproxy: Toxiproxy | undefined;
  const placed = topology.groups.some((g) => g.region !== "local") && !values["no-emulate"];
  if (placed) {
    const table = await loadRttTable(values.rtt ? userPath(values.rtt) : undefined);
    // Never hand out a port the topology gives to a process that has not started yet.
    const reserved = new Set(
      [...topology.groups.flatMap((g) => [g.address, g.streamAddress]), topology.web.address].map((a) => parseAddress(a).port),
    );
    const port = () => freePort(reserved);
    toxiproxy = await startToxiproxy(await findToxiproxy(), await port());
    emulation = await emulate(topology, table, toxiproxy, port);
    say(`emulating ${emulation.edges.length} links (RTT table: ${table.date}; toxiproxy at ${toxiproxy.apiUrl}):`);
    for (const e of emulation.edges) {
      say(`  ${e.name.padEnd(28)} ${e.kind.padEnd(12)} RTT ${String(e.rttMs).padStart(5)} ms ± ${e.jitterMs}  (${e.upstreamMs} + ${e.downstreamMs} ms via ${e.listen})`);
    }
  }
  const topologyFiles = new Map<string, string>();
  if (emulation) {
    const dir = join(dataDir, "emulation");
    await mkdir(dir, { recursive: true });
    for (const g of topology.groups) {
      const file = join(dir, `${topology.name}-${g.name}.json`);
      await writeFile(file, JSON.stringify(emulation.topologyFor(g.name), null, 2));
      topologyFiles.set(g.name, file);
    }
  }

  const width = Math.max(3, ...topology.groups.map((g) => g.name.length));
  const children = new Map<string, ChildProcess>();
  /** When each group was last restarted (within the last minute). */
  const restarts = new Map<string, number[]>();
  const pendingRestarts = new Map<string, NodeJS.Timeout>();
  let up = false;
  let stopping = false;
  let exitCode = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  const stopAll = (reason: string, code: number): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    say(`stopping ${children.size} process(es): ${reason}`);
    for (const timer of pendingRestarts.values()) clearTimeout(timer);
    pendingRestarts.clear();
    if (children.size === 0) resolveDone();
    for (const child of children.values()) child.kill("SIGTERM");
    setTimeout(() => {
      for (const child of children.values()) child.kill("SIGKILL");
    }, STOP_GRACE_MS).unref();
    void toxiproxy?.stop();
  };

  const commands = topology.groups.map((group) => ({
    name: group.name,
    args: [
      "--import", "tsx", MAIN,
      "--topology", topologyFiles.get(group.name) ?? topology.source ?? which,
      "--group", group.name,
      "--data-dir", dataDir,
    ],
  }));
  if (withWeb) {
    const port = String(parseAddress(topology.web.address).port);
    commands.push({
      name: "web",
      args: [
        "--import", "tsx", WEB_SERVE,
        "--port", port,
        "--config-json", JSON.stringify(webConfig(topology, emulation)),
        // A production build: no reloads when sources change during a long measurement.
        ...(values["web-build"] ? ["--build"] : []),
      ],
    });
  }
  const start = (name: string, args: readonly string[]): void => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: process.env });
    children.set(name, child);
    const prefix = `[${name.padEnd(width)}] `;
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => process.stdout.write(`${prefix + line}\n`));
    }
    child.on("exit", (code, signal) => {
      if (children.get(name) === child) children.delete(name);
      const how = signal ?? `code ${code}`;
      if (stopping) {
        if (children.size === 0) resolveDone();
        return;
      }
      // Before the topology is up a dying group is a setup problem (a port, a config): stop.
      if (!up) return stopAll(`${name} exited (${how})`, 1);
      const now = Date.now();
      const recent = (restarts.get(name) ?? []).filter((t) => now - t < RESTART_WINDOW_MS);
      if (recent.length >= maxRestarts) {
        return stopAll(`group ${name} is crash-looping: it exited (${how}) after ${recent.length} restarts within ${RESTART_WINDOW_MS / 1000} s (${MAX_RESTARTS_ENV}=${maxRestarts})`, 1);
      }
      recent.push(now);
      restarts.set(name, recent);
      const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (recent.length - 1));
      // Games held by a restarted engine are lost: their clients see the stream close.
      say(`group ${name} exited (${how}), restarting in ${delay} ms`);
      pendingRestarts.set(
        name,
        setTimeout(() => {
          pendingRestarts.delete(name);
          if (!stopping) start(name, args);
        }, delay),
      );
    });
  };
  for (const { name, args } of commands) start(name, args);
  process.on("SIGINT", () => stopAll("interrupted", 0));
  process.on("SIGTERM", () => stopAll("terminated", 0));
  // Whoever started us (a shell, pnpm, a test) went away without a signal to us: stop, rather than
  // leave servers holding the topology's ports with nobody to stop them.
  const parent = process.ppid;
  const watchParent = setInterval(() => {
    if (process.ppid !== parent) stopAll("the parent process exited", 1);
  }, PARENT_CHECK_MS);
  watchParent.unref();

  const urls = topology.groups.map((g) => `http://${g.address}/healthz`);
  if (withWeb) urls.push(topology.web.publicUrl);
  const ready = await Promise.race([waitReady(urls), done.then(() => false)]);
  if (ready && !stopping) {
    up = true;
    say(`${topology.name} is up: ${topology.groups.length} process(es); data in ${dataDir}`);
    for (const g of topology.groups) {
      const streams = g.components.some((c) => c === "engine" || c === "music") ? `  streams ${g.streamPublicUrl}` : "";
      say(`  ${g.name.padEnd(width)}  ${g.publicUrl}${streams}  ${g.components.join(", ") || "(no components)"}`);
    }
    if (withWeb) {
      say(`Open ${topology.web.publicUrl} in a browser to play.`);
      say(
        `The stream servers use a self-signed certificate (sha-256 ${Buffer.from(certificate.sha256).toString("hex").slice(0, 16)}…): ` +
          `open ${groupOf(topology, "engine")!.streamPublicUrl}/ once and accept it, or start Chrome with --ignore-certificate-errors.`,
      );
    }
    say(`Ctrl-C stops everything. A process that dies is restarted (at most ${maxRestarts} times a minute).`);
  } else if (!stopping) {
    stopAll(`not healthy after ${READY_TIMEOUT_MS / 1000} s`, 1);
  }
  await done;
  return exitCode;
}

/** FLAPLAB_DEV_MAX_RESTARTS_PER_MINUTE, or the default; throws for a value that is not a whole number. */
function maxRestartsPerMinute(env: NodeJS.ProcessEnv): number {
  const raw = env[MAX_RESTARTS_ENV]?.trim();
  if (raw === undefined || raw === "") return DEFAULT_MAX_RESTARTS_PER_MINUTE;
  if (!/^\d+$/.test(raw)) throw new Error(`${MAX_RESTARTS_ENV} must be a whole number, got "${raw}"`);
  return Number(raw);
}

/** What the web client needs to find the Connect endpoints it calls (through the emulated links, if any). */
function webConfig(topology: Topology, emulation: Emulation | undefined): Record<string, string> {
  const url = (c: "auth" | "initiator" | "score") => emulation?.browserUrl(c) ?? groupOf(topology, c)!.publicUrl;
  return { authUrl: url("auth"), initiatorUrl: url("initiator"), scoreUrl: url("score"), topology: topology.name };
}

/** Throws, naming the first address something else already listens on. */
async function assertPortsFree(listeners: readonly { who: string; address: string }[]): Promise<void> {
  for (const { who, address } of listeners) {
    const { host, port } = parseAddress(address);
    const s = createServer();
    const err = await new Promise<NodeJS.ErrnoException | undefined>((r) => {
      s.once("error", r);
      s.listen(port, host, () => r(undefined));
    });
    if (!err) {
      await new Promise((r) => s.close(r));
    } else if (err.code === "EADDRINUSE") {
      throw new Error(`${address} (${who}) is already in use: is another \`pnpm dev\` running? Stop it first.`);
    }
  }
}

async function waitReady(urls: readonly string[]): Promise<boolean> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (const url of urls) {
    for (;;) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
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
