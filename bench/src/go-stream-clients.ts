// The Go stream clients (bench/go-stream-clients): gorilla/websocket players of the WebSocket game
// stream, built with Go into .tools/bin once per source change, and driven like the Node clients
// (stream-clients.ts): the same requests and answers, one JSON line each over stdin/stdout.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { benchDir, type Child, childOf, type Reply, repoDir, requestChannel, spawned } from "./child.js";

const SOURCE_DIR = join(benchDir(), "go-stream-clients");
const SOURCES = ["go.mod", "go.sum", "main.go"];
const BINARY = join(repoDir(), ".tools", "bin", "flaplab-go-stream-clients");

/** Why the Go clients cannot run here (no Go), or null when they can be built. */
export async function goClientsUnavailable(): Promise<string | null> {
  try {
    await promisify(execFile)("go", ["version"]);
    return null;
  } catch {
    return "needs Go (Debian's golang-go, or https://go.dev/dl/) to build bench/go-stream-clients";
  }
}

/** Builds the clients unless the binary was built from these very sources; returns its path. */
export async function buildGoClients(log: (line: string) => void = () => {}): Promise<string> {
  const hash = createHash("sha256");
  for (const file of SOURCES) hash.update(await readFile(join(SOURCE_DIR, file)));
  const version = hash.digest("hex");
  const marker = `${BINARY}.version`;
  if (existsSync(BINARY) && (await readFile(marker, "utf8").catch(() => "")) === version) return BINARY;
  log("  building the Go stream clients (bench/go-stream-clients; the first build downloads its modules)");
  await mkdir(join(repoDir(), ".tools", "bin"), { recursive: true });
  await promisify(execFile)("go", ["build", "-o", BINARY, "."], { cwd: SOURCE_DIR, env: { ...process.env, GOFLAGS: "-mod=mod" }, timeout: 300_000 });
  await writeFile(marker, version);
  return BINARY;
}

/** Starts the Go clients (building them first if their sources changed). */
export async function startGoClients(log?: (line: string) => void): Promise<Child> {
  const binary = await buildGoClients(log);
  const name = "go-stream-clients";
  const proc: ChildProcess = spawn(binary, [], { stdio: ["pipe", "pipe", "inherit"] });
  const channel = requestChannel(name, proc, (envelope) => proc.stdin!.write(`${JSON.stringify(envelope)}\n`));
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      process.stderr.write(`${name}: ${line}\n`);
      return;
    }
    channel.answer(reply);
  });
  await spawned(proc);
  return childOf(proc, channel, async () => {
    // Closing its stdin closes every game's connection and ends it.
    proc.stdin!.end();
    await channel.waitExit(8000);
    if (!channel.exited()) proc.kill("SIGKILL");
    await channel.waitExit();
  });
}
