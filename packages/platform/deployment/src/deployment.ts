import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { loadOrCreateKeys } from "@flaplab/identity";
import { emulate, findToxiproxy, loadRttTable, startToxiproxy, type Emulation, type Toxiproxy } from "@flaplab/netem";
import { freePort, type TopologyCopy, topologyOnFreePorts } from "@flaplab/ports";
import { type ComponentName, nodeFlagsFor } from "@flaplab/component";
import { groupOf, groupsOf, loadTopology, parseAddress, type Topology } from "@flaplab/runtime";
import { type RedisServer, SNAPSHOT_STORE_ENV, startRedisServer } from "@flaplab/snapshots";
import { DEV_CERTIFICATE_FILE, loadOrCreateDevCertificate } from "@flaplab/stream-servers";
import { RestartPolicy } from "./restarts.js";
import { processTreesCpuUs } from "./process-cpu.js";

const REPO = resolve(import.meta.dirname, "../../../..");
/** The repository's topologies: `startDeployment("microservices", …)` reads `topologies/microservices.json`. */
export const TOPOLOGIES_DIR = join(REPO, "topologies");
const SERVER_DIR = join(REPO, "apps/server");
const SERVER_MAIN = join(SERVER_DIR, "src/main.ts");
const WEB_DIR = join(REPO, "apps/web");
const WEB_SERVE = join(WEB_DIR, "scripts/serve.ts");

/**
 * A copy of the repository topology `name` in a new temporary folder, with every address (and the
 * web client's) on a free loopback port, so a deployment of it can run beside `pnpm dev`.
 */
export function repositoryTopologyOnFreePorts(name: string): Promise<TopologyCopy> {
  return topologyOnFreePorts(join(TOPOLOGIES_DIR, `${name}.json`));
}

export const DEFAULT_READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const KEPT_LINES = 2_000;

export interface DeploymentOptions {
  /** Keys, certificates, databases and logs (`<dataDir>/logs`) of the deployment (relative: to the current folder). */
  readonly dataDir: string;
  /** The web client: the Vite dev server ("dev", the default), a production build ("build"), or none. */
  readonly web?: "dev" | "build" | "none";
  /** Put the RTT of each edge between regions on the wire with toxiproxy (default true). */
  readonly emulate?: boolean;
  /**
   * Route the browser's links through toxiproxy even between groups on one host (no latency
   * added there), so that a link can be cut on purpose: `emulation.edges` names each proxy.
   */
  readonly proxyBrowserLinks?: boolean;
  /**
   * Calls between regions over https://, as in the cloud: a TLS listener (the dev certificate of
   * `<dataDir>/tls`) in front of each callee on every cross-region edge, behind that edge's
   * proxy, and the processes trust that certificate (NODE_EXTRA_CA_CERTS). Default false.
   */
  readonly tlsBetweenRegions?: boolean;
  /** The RTT table (default: topologies/rtt.json). */
  readonly rttFile?: string;
  /** A group that exits more often than this within a minute, once up, stops the deployment (default 5). */
  readonly maxRestartsPerMinute?: number;
  /** How long the processes have to report that they listen (default 60 s). */
  readonly readyTimeoutMs?: number;
  /** The processes' environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** Every line a process prints, with its name (a group's, or "web"). */
  readonly onLine?: (process: string, line: string) => void;
  /** What the deployment does: its emulated links, readiness, restarts, stopping. */
  readonly onEvent?: (event: DeploymentEvent) => void;
}

export type DeploymentEvent =
  | { readonly type: "emulating"; readonly emulation: Emulation; readonly rttTableDate: string; readonly toxiproxyUrl: string }
  | { readonly type: "ready" }
  /** Several engines share their games' snapshots in this store (a Redis server started for them, or the environment's). */
  | { readonly type: "snapshot-store"; readonly url: string; readonly engines: readonly string[]; readonly started: boolean }
  /** `process` (a group's name, or "web") exited (`exit`: its signal or "code N") and starts again in `delayMs`. */
  | { readonly type: "restarting"; readonly process: string; readonly label: string; readonly exit: string; readonly delayMs: number }
  | { readonly type: "stopping"; readonly reason: string; readonly processes: number };

/** Where one process group of the deployment answers. */
export interface GroupEndpoint {
  readonly group: string;
  readonly components: readonly ComponentName[];
  /** Its Connect / gRPC listener. */
  readonly address: { readonly host: string; readonly port: number };
  /** The base URL of its Connect / gRPC endpoints. */
  readonly url: string;
  /** Its stream server's URL, for a group with the engine or music. */
  readonly streamUrl: string | undefined;
}

export interface Deployment {
  readonly topology: Topology;
  readonly dataDir: string;
  /** The processes' call logs. */
  readonly logsDir: string;
  /** Each group's endpoints, by group name. */
  readonly endpoints: Readonly<Record<string, GroupEndpoint>>;
  /** The web client's URL (undefined with `web: "none"`). */
  readonly webUrl: string | undefined;
  /** The emulated links (undefined when nothing is emulated). */
  readonly emulation: Emulation | undefined;
  /** Toxiproxy's API, when links are emulated. */
  readonly toxiproxyUrl: string | undefined;
  /** The engines' shared snapshot store, when the topology runs several engines. */
  readonly snapshotStoreUrl: string | undefined;
  /** SHA-256 of the stream servers' self-signed certificate. */
  readonly certificateSha256: Uint8Array;
  /** The last lines the processes printed, each as "[process] line". */
  readonly lines: readonly string[];
  /**
   * Settles once: resolves when every process has reported it listens; rejects (and the deployment
   * stops) when one exits first or they take longer than `readyTimeoutMs`.
   */
  readonly ready: Promise<void>;
  /** Resolves when every process has stopped: 0 after stop(), 1 after a failure. */
  readonly stopped: Promise<number>;
  /** The base URL of the group serving `component`. */
  urlOf(component: ComponentName): string;
  /** The pid of the running process `name` (a group's name, or "web"). */
  pidOf(name: string): number | undefined;
  /**
   * CPU time each group's process (with the processes it started, such as engine shards) has used
   * so far, with the components it runs: take it before and after a window and subtract.
   */
  cpuTimes(): Promise<readonly GroupCpu[]>;
  /** Stops every process (SIGTERM, then SIGKILL after a grace period) and toxiproxy. */
  stop(reason?: string): Promise<number>;
}

/** A group process's CPU time so far (user + system, µs; null when /proc cannot tell). */
export interface GroupCpu {
  readonly group: string;
  readonly components: readonly ComponentName[];
  readonly cpuUs: number | null;
}

interface Command {
  readonly name: string;
  /** How messages name it: "group score", "the web client". */
  readonly label: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The JSON `event` of the line the process prints when it listens. */
  readonly readyEvent: "listening" | "web-listening";
}

/**
 * Starts `topology` (a topology file, the name of one in `topologies/`, or one loaded from a file) on this machine: one
 * child process per group (`apps/server`), toxiproxy for the links between regions, and the web
 * client. The same way for `pnpm dev`, the tests, the study and the bench.
 *
 * Throws before starting anything when a port of the topology is taken. Once `ready` has resolved,
 * a group that exits is restarted (with backoff) unless it crash-loops.
 */
export async function startDeployment(topology: string | Topology, options: DeploymentOptions): Promise<Deployment> {
  const topo = typeof topology === "string" ? await loadTopology(topology, TOPOLOGIES_DIR) : topology;
  // The processes read the same file.
  const topologyFile = topo.source;
  if (topologyFile === undefined) throw new Error(`topology ${topo.name} was not read from a file: the processes need one`);
  // Absolute: the processes run in their own package's folder.
  const dataDir = resolve(options.dataDir);
  const web = options.web ?? "dev";
  // Before the processes start, so they share one key pair and one stream certificate.
  await loadOrCreateKeys(dataDir);
  const certificate = await loadOrCreateDevCertificate(
    join(dataDir, "tls"),
    topo.groups.map((g) => parseAddress(g.streamAddress).host),
  );
  // A second deployment of the same topology would otherwise find the first one's servers.
  await assertPortsFree([
    ...topo.groups.flatMap((g) => [
      { who: g.name, address: g.address },
      { who: `${g.name} streams`, address: g.streamAddress },
    ]),
    ...(web !== "none" ? [{ who: "web", address: topo.web.address }] : []),
  ]);

  let emulation: Emulation | undefined;
  let toxiproxy: Toxiproxy | undefined;
  const topologyFiles = new Map<string, string>();
  const emulating = topo.groups.some((g) => g.region !== "local") && options.emulate !== false;
  if (emulating || options.proxyBrowserLinks) {
    const table = await loadRttTable(options.rttFile);
    // Never hand out a port the topology gives to a process that has not started yet.
    const reserved = new Set([...topo.groups.flatMap((g) => [g.address, g.streamAddress]), topo.web.address].map((a) => parseAddress(a).port));
    const port = () => freePort(reserved);
    toxiproxy = await startToxiproxy(await findToxiproxy(), await port());
    try {
      emulation = await emulate(topo, table, toxiproxy, port, {
        browserLinksOnOneHost: options.proxyBrowserLinks === true,
        ...(options.tlsBetweenRegions ? { tlsBetweenRegions: { cert: certificate.cert, key: certificate.key } } : {}),
      });
      const dir = join(dataDir, "emulation");
      await mkdir(dir, { recursive: true });
      for (const g of topo.groups) {
        const file = join(dir, `${topo.name}-${g.name}.json`);
        await writeFile(file, JSON.stringify(emulation.topologyFor(g.name), null, 2));
        topologyFiles.set(g.name, file);
      }
    } catch (err) {
      await Promise.all([toxiproxy.stop(), emulation?.close()]);
      throw err;
    }
    options.onEvent?.({ type: "emulating", emulation, rttTableDate: table.date, toxiproxyUrl: toxiproxy.apiUrl });
  }

  // Several engines share their games' snapshots: a Redis server for them, unless the environment names a store.
  const env = { ...(options.env ?? process.env) };
  // The callers of an https:// call URL trust the TLS listeners' certificate.
  if (emulation?.edges.some((e) => e.tls)) env["NODE_EXTRA_CA_CERTS"] = join(dataDir, "tls", DEV_CERTIFICATE_FILE);
  const engines = groupsOf(topo, "engine").map((g) => g.name);
  let redis: RedisServer | undefined;
  if (engines.length > 1) {
    if (!env[SNAPSHOT_STORE_ENV]) {
      const reserved = new Set([...topo.groups.flatMap((g) => [g.address, g.streamAddress]), topo.web.address].map((a) => parseAddress(a).port));
      try {
        redis = await startRedisServer({ port: await freePort(reserved), onLine: (line) => options.onLine?.("redis", line) });
      } catch (err) {
        await Promise.all([toxiproxy?.stop(), emulation?.close()]);
        throw err;
      }
      env[SNAPSHOT_STORE_ENV] = redis.url;
    }
    options.onEvent?.({ type: "snapshot-store", url: env[SNAPSHOT_STORE_ENV]!, engines, started: redis !== undefined });
  }

  const commands: Command[] = topo.groups.map((g) => ({
    name: g.name,
    label: `group ${g.name}`,
    cwd: SERVER_DIR,
    readyEvent: "listening",
    args: [...nodeFlagsFor(g.components), "--import", "tsx", SERVER_MAIN, "--topology", topologyFiles.get(g.name) ?? topologyFile, "--group", g.name, "--data-dir", dataDir],
  }));
  if (web !== "none") {
    commands.push({
      name: "web",
      label: "the web client",
      cwd: WEB_DIR,
      readyEvent: "web-listening",
      args: [
        "--import", "tsx", WEB_SERVE,
        "--port", String(parseAddress(topo.web.address).port),
        "--config-json", JSON.stringify(webConfig(topo, emulation)),
        ...(web === "build" ? ["--build"] : []),
      ],
    });
  }

  const restarts = new RestartPolicy(options.maxRestartsPerMinute);
  const children = new Map<string, ChildProcess>();
  const pendingRestarts = new Map<string, NodeJS.Timeout>();
  const listening = new Set<string>();
  const lines: string[] = [];
  let up = false;
  let stopping = false;
  let exitCode = 0;
  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((r) => (resolveStopped = r));
  let settleReady!: (err?: Error) => void;
  const ready = new Promise<void>((resolveReady, rejectReady) => {
    settleReady = (err) => (err ? rejectReady(err) : resolveReady());
  });
  // A caller that only awaits `stopped` must not see an unhandled rejection.
  ready.catch(() => {});

  const stopAll = (reason: string, code: number): void => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    clearTimeout(readyTimer);
    options.onEvent?.({ type: "stopping", reason, processes: children.size });
    if (!up) settleReady(new Error(`${topo.name} did not come up: ${reason}\n${lines.slice(-30).join("\n")}`));
    for (const timer of pendingRestarts.values()) clearTimeout(timer);
    pendingRestarts.clear();
    for (const child of children.values()) child.kill("SIGTERM");
    const kill = setTimeout(() => {
      for (const child of children.values()) child.kill("SIGKILL");
    }, STOP_GRACE_MS);
    kill.unref();
    void Promise.all([toxiproxy?.stop(), emulation?.close(), allExited().then(() => redis?.stop())]).then(() => {
      clearTimeout(kill);
      resolveStopped(exitCode);
    });
  };
  let exitWaiters: Array<() => void> = [];
  const allExited = () => (children.size === 0 ? Promise.resolve() : new Promise<void>((r) => exitWaiters.push(r)));

  const start = (command: Command): void => {
    const child = spawn(process.execPath, command.args, { cwd: command.cwd, stdio: ["ignore", "pipe", "pipe"], env });
    children.set(command.name, child);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        lines.push(`[${command.name}] ${line}`);
        if (lines.length > KEPT_LINES) lines.shift();
        options.onLine?.(command.name, line);
        if (!up && !listening.has(command.name) && reportsListening(line, command.readyEvent)) {
          listening.add(command.name);
          if (listening.size === commands.length && !stopping) {
            up = true;
            clearTimeout(readyTimer);
            settleReady();
            options.onEvent?.({ type: "ready" });
          }
        }
      });
    }
    child.on("exit", (code, signal) => {
      if (children.get(command.name) === child) children.delete(command.name);
      if (children.size === 0) {
        for (const w of exitWaiters) w();
        exitWaiters = [];
      }
      if (stopping) return;
      const how = signal ?? `code ${code}`;
      // Before the deployment is up a process that exits is a setup problem (a port, a config): stop.
      if (!up) return stopAll(`${command.label} exited (${how})`, 1);
      const delay = restarts.next(command.name);
      if (delay === undefined) {
        return stopAll(`${command.label} is crash-looping: it exited (${how}) after ${restarts.limit} restart(s) within a minute`, 1);
      }
      // A restarted engine's games are lost with it, unless other engines continue them from the
      // snapshot store (a topology with several engines).
      options.onEvent?.({ type: "restarting", process: command.name, label: command.label, exit: how, delayMs: delay });
      pendingRestarts.set(
        command.name,
        setTimeout(() => {
          pendingRestarts.delete(command.name);
          if (!stopping) start(command);
        }, delay),
      );
    });
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const readyTimer = setTimeout(() => stopAll(`not listening after ${readyTimeoutMs / 1000} s`, 1), readyTimeoutMs);
  for (const command of commands) start(command);

  const endpoints: Record<string, GroupEndpoint> = {};
  for (const g of topo.groups) {
    const streams = g.components.some((c) => c === "engine" || c === "music");
    endpoints[g.name] = {
      group: g.name,
      components: g.components,
      address: parseAddress(g.address),
      url: g.publicUrl,
      streamUrl: streams ? g.streamPublicUrl : undefined,
    };
  }
  return {
    topology: topo,
    dataDir,
    logsDir: join(dataDir, "logs"),
    endpoints,
    webUrl: web !== "none" ? topo.web.publicUrl : undefined,
    emulation,
    toxiproxyUrl: toxiproxy?.apiUrl,
    snapshotStoreUrl: engines.length > 1 ? env[SNAPSHOT_STORE_ENV] : undefined,
    certificateSha256: certificate.sha256,
    lines,
    ready,
    stopped,
    urlOf(component) {
      const group = groupOf(topo, component);
      if (!group) throw new Error(`topology ${topo.name} has no group with ${component}`);
      return group.publicUrl;
    },
    pidOf(name) {
      return children.get(name)?.pid;
    },
    async cpuTimes() {
      const pids = topo.groups.flatMap((g) => children.get(g.name)?.pid ?? []);
      const cpu = await processTreesCpuUs(pids);
      const cpuOf = new Map(pids.map((pid, i) => [pid, cpu[i]!]));
      return topo.groups.map((g): GroupCpu => {
        const pid = children.get(g.name)?.pid;
        return { group: g.name, components: [...g.components], cpuUs: pid === undefined ? null : (cpuOf.get(pid) ?? null) };
      });
    },
    stop(reason = "stopped") {
      stopAll(reason, 0);
      return stopped;
    },
  };
}

/** Whether `line` is the JSON line a process prints once it listens (`{"event": <event>, …}`). */
function reportsListening(line: string, event: string): boolean {
  if (!line.startsWith("{") || !line.includes(`"${event}"`)) return false;
  try {
    return (JSON.parse(line) as { event?: unknown }).event === event;
  } catch {
    return false;
  }
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
      throw new Error(`${address} (${who}) is already in use: is another deployment of this topology running? Stop it first.`);
    }
  }
}
