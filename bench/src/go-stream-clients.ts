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
import { benchDir, type Child, repoDir } from "./child.js";

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

interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: string;
}

/** Starts the Go clients (building them first if their sources changed). */
export async function startGoClients(log?: (line: string) => void): Promise<Child> {
  const binary = await buildGoClients(log);
  const proc: ChildProcess = spawn(binary, [], { stdio: ["pipe", "pipe", "inherit"] });
  const name = "go-stream-clients";
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let exited: string | undefined;
  const exitedPromise = new Promise<void>((r) =>
    proc.once("exit", (code, signal) => {
      exited = `${name} exited (${signal ?? `code ${code}`})`;
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(exited));
      }
      pending.clear();
      r();
    }),
  );
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      process.stderr.write(`${name}: ${line}\n`);
      return;
    }
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    clearTimeout(p.timer);
    if (reply.ok) p.resolve(reply.result ?? null);
    else p.reject(new Error(`${name}: ${reply.error}`));
  });
  await new Promise<void>((ok, fail) => {
    proc.once("spawn", ok);
    proc.once("error", fail);
  });
  return {
    pid: proc.pid!,
    request<T>(body: object, timeoutMs = 120_000): Promise<T> {
      if (exited) return Promise.reject(new Error(exited));
      const id = nextId++;
      return new Promise<T>((ok, fail) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          fail(new Error(`${name}: no answer to ${JSON.stringify(body).slice(0, 80)} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: ok as (v: unknown) => void, reject: fail, timer });
        proc.stdin!.write(`${JSON.stringify({ id, body })}\n`);
      });
    },
    async stop() {
      if (exited) return;
      proc.stdin!.end();
      const grace = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
      await Promise.race([exitedPromise, grace(8000)]);
      if (!exited) proc.kill("SIGKILL");
      await exitedPromise;
    },
  };
}
