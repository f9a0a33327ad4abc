// The Go stream clients (bench/go-stream-clients): gorilla/websocket players of the WebSocket game
// stream, built with Go into .tools/bin once per source change, and driven like the Node clients
// (stream-clients.ts): the same requests and answers, one JSON line each over stdin/stdout.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { type Child, childOf, type Reply, requestChannel, spawned } from "./child.js";
import { buildGoProgram, goUnavailable } from "./go-build.js";

/** Why the Go clients cannot run here (no Go), or null when they can be built. */
export function goClientsUnavailable(): Promise<string | null> {
  return goUnavailable("go-stream-clients");
}

/** Builds the clients unless the binary was built from these very sources; returns its path. */
export function buildGoClients(log?: (line: string) => void): Promise<string> {
  return buildGoProgram("go-stream-clients", log);
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
