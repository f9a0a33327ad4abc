import { type ChildProcess, spawn } from "node:child_process";
import { createConnection } from "node:net";

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Loopback port to listen on. */
  readonly port: number;
  /** The server binary (default `redis-server`, else `valkey-server`, on PATH). */
  readonly bin?: string;
  /** Every line the server prints. */
  readonly onLine?: (line: string) => void;
  /** How long to wait for it to answer, ms (default 10 s). */
  readonly timeoutMs?: number;
}

/**
 * Starts a throwaway Redis server on 127.0.0.1:`port`: no persistence, no config file. Resolves
 * once it answers PING. Debian: `apt-get install redis-server` (`pnpm run setup:test` does).
 */
export async function startRedisServer(options: StartRedisOptions): Promise<RedisServer> {
  const bin = options.bin ?? "redis-server";
  const child: ChildProcess = spawn(
    bin,
    ["--port", String(options.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // Plain listeners: events.once would reject the exit wait on a spawn error.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const spawnFailed = new Promise<NodeJS.ErrnoException>((resolve) => child.once("error", resolve));
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8");
    let rest = "";
    stream?.on("data", (chunk: string) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) options.onLine?.(line);
    });
  }
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const early = await Promise.race([spawnFailed, exited, ping(options.port).then((ok) => ok)]);
    if (early === true) break;
    if (early instanceof Error) {
      throw new Error(
        early.code === "ENOENT" ? `${bin} not found: install Redis (Debian: apt-get install redis-server, or pnpm run setup:test)` : `${bin}: ${early.message}`,
      );
    }
    if (typeof early === "object" && early !== null) throw new Error(`${bin} exited (${early.code ?? early.signal}) before it answered on port ${options.port}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${bin} did not answer on port ${options.port} within ${options.timeoutMs ?? 10_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${options.port}`,
    port: options.port,
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True when a Redis server on `port` answers PING with PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")));
  });
}
