// Runs a whole topology on this machine (startDeployment) and prints what it does until Ctrl-C.
// Usage: pnpm dev <topology|file.json> [--data-dir <dir>] [--no-web] [--web-build] [--no-emulate] [--tls] [--rtt <file>]
import { readdir } from "node:fs/promises";
import { parseArgs } from "node:util";
import { type DeploymentEvent, startDeployment } from "@flaplab/deployment";
import { groupOf, loadTopology } from "@flaplab/runtime";
import { readText, wholeNumberOf } from "@flaplab/settings";
import { DEFAULT_DATA_DIR, TOPOLOGIES_DIR, userPath } from "./paths.js";
import { DATA_DIR, DEV_MAX_RESTARTS_PER_MINUTE } from "./settings.js";

const PARENT_CHECK_MS = 1_000;
const USAGE = "usage: pnpm dev <topology> [--data-dir <dir>] [--no-web] [--web-build] [--no-emulate] [--tls] [--rtt <file>]";

function say(line: string): void {
  process.stdout.write(`[dev] ${line}\n`);
}

function describe(event: DeploymentEvent): void {
  if (event.type === "emulating") {
    say(`emulating ${event.emulation.edges.length} links (RTT table: ${event.rttTableDate}; toxiproxy at ${event.toxiproxyUrl}):`);
    for (const e of event.emulation.edges) {
      const tls = e.tls ? `, TLS at ${e.tls.listen}` : "";
      say(`  ${e.name.padEnd(28)} ${e.kind.padEnd(12)} RTT ${String(e.rttMs).padStart(5)} ms ± ${e.jitterMs}  (${e.upstreamMs} + ${e.downstreamMs} ms via ${e.listen}${tls})`);
    }
  } else if (event.type === "snapshot-store") {
    say(`${event.engines.length} engines (${event.engines.join(", ")}) share game snapshots in ${event.url}${event.started ? " (a Redis server started for them)" : ""}`);
  } else if (event.type === "restarting") {
    say(`${event.label} exited (${event.exit}), restarting in ${event.delayMs} ms`);
  } else if (event.type === "stopping") {
    say(`stopping ${event.processes} process(es): ${event.reason}`);
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      "data-dir": { type: "string", default: readText(process.env, DATA_DIR) },
      "no-web": { type: "boolean", default: false },
      "web-build": { type: "boolean", default: false },
      "no-emulate": { type: "boolean", default: false },
      tls: { type: "boolean", default: false },
      rtt: { type: "string" },
    },
  });
  const maxRestarts = wholeNumberOf(process.env, DEV_MAX_RESTARTS_PER_MINUTE);
  const which = positionals[0];
  if (!which) {
    const known = (await readdir(TOPOLOGIES_DIR)).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5));
    process.stderr.write(`${USAGE}\ntopologies: ${known.join(", ")}\n`);
    return 2;
  }
  const dataDir = values["data-dir"] ? userPath(values["data-dir"]) : DEFAULT_DATA_DIR;
  const topology = await loadTopology(which.includes("/") || which.endsWith(".json") ? userPath(which) : which, TOPOLOGIES_DIR);
  // Each process's lines, prefixed with its name padded to the longest one.
  const width = Math.max(3, ...topology.groups.map((g) => g.name.length));
  const deployment = await startDeployment(topology, {
    dataDir,
    web: values["no-web"] ? "none" : values["web-build"] ? "build" : "dev",
    emulate: !values["no-emulate"],
    tlsBetweenRegions: values.tls,
    ...(values.rtt ? { rttFile: userPath(values.rtt) } : {}),
    maxRestartsPerMinute: maxRestarts,
    onLine: (name, line) => process.stdout.write(`[${name.padEnd(width)}] ${line}\n`),
    onEvent: describe,
  });
  process.on("SIGINT", () => void deployment.stop("interrupted"));
  process.on("SIGTERM", () => void deployment.stop("terminated"));
  // Whoever started us (a shell, pnpm, a test) went away without a signal to us: stop, rather than
  // leave servers holding the topology's ports with nobody to stop them.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void deployment.stop("the parent process exited");
  }, PARENT_CHECK_MS).unref();

  try {
    await deployment.ready;
  } catch {
    return deployment.stopped;
  }
  if (values.tls && !deployment.emulation?.edges.some((e) => e.tls)) {
    say(`--tls: ${topology.name} has no emulated calls between regions, so every call stays on http://`);
  }
  say(`${topology.name} is up: ${topology.groups.length} process(es); data in ${dataDir}`);
  for (const e of Object.values(deployment.endpoints)) {
    say(`  ${e.group.padEnd(width)}  ${e.url}${e.streamUrl ? `  streams ${e.streamUrl}` : ""}  ${e.components.join(", ") || "(no components)"}`);
  }
  if (deployment.webUrl) {
    say(`Open ${deployment.webUrl} in a browser to play.`);
    say(
      `The stream servers use a self-signed certificate (sha-256 ${Buffer.from(deployment.certificateSha256).toString("hex").slice(0, 16)}…): ` +
        `open ${groupOf(topology, "engine")!.streamPublicUrl}/ once and accept it, or start Chrome with --ignore-certificate-errors.`,
    );
  }
  say(`Ctrl-C stops everything. A process that dies is restarted (at most ${maxRestarts} times a minute).`);
  return deployment.stopped;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[dev] ${(err as Error).message}\n`);
    process.exit(2);
  },
);
