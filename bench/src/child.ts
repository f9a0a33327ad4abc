// Child processes of the benchmark: tsx scripts that answer requests over the IPC channel.
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";

const BENCH_DIR = resolve(import.meta.dirname, "..");

interface Envelope {
  readonly id: number;
  readonly body: unknown;
}

interface Reply {
  readonly id: number;
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: string;
}

export interface Child {
  readonly pid: number;
  /** Sends `body` to the child's handler and resolves with its answer (rejects on its error or after `timeoutMs`). */
  request<T>(body: object, timeoutMs?: number): Promise<T>;
  /** Ends the child: disconnects, then SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/**
 * Starts `script` (a path under bench/src) with tsx and an IPC channel, this process's environment
 * and `env` on top of it; its stdout goes to our stderr.
 */
export async function startChild(script: string, nodeArgs: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<Child> {
  const path = resolve(BENCH_DIR, "src", script);
  const proc: ChildProcess = spawn(process.execPath, [...nodeArgs, "--import", "tsx", path], {
    cwd: BENCH_DIR,
    stdio: ["ignore", "pipe", "inherit", "ipc"],
    env: { ...process.env, ...env, FLAPLAB_BENCH_CHILD: "1" },
  });
  proc.stdout?.on("data", (d: Buffer) => process.stderr.write(d));
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  let exited: string | undefined;
  const exitedPromise = new Promise<void>((r) =>
    proc.once("exit", (code, signal) => {
      exited = `${script} exited (${signal ?? `code ${code}`})`;
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(exited));
      }
      pending.clear();
      r();
    }),
  );
  proc.on("message", (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(`${script}: ${m.error}`));
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
          fail(new Error(`${script}: no answer to ${JSON.stringify(body).slice(0, 80)} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: ok as (v: unknown) => void, reject: fail, timer });
        proc.send({ id, body } satisfies Envelope);
      });
    },
    async stop() {
      if (exited) return;
      if (proc.connected) proc.disconnect();
      const grace = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
      await Promise.race([exitedPromise, grace(3000)]);
      if (!exited) proc.kill("SIGTERM");
      await Promise.race([exitedPromise, grace(3000)]);
      if (!exited) proc.kill("SIGKILL");
      await exitedPromise;
    },
  };
}

/**
 * In a child: answers each request with `handler`'s result (or its error), and exits when the
 * parent goes away.
 */
export function serveRequests(handler: (body: never) => Promise<unknown>, onExit?: () => Promise<void>): void {
  if (!process.send) throw new Error("not started as a benchmark child (no IPC channel)");
  process.on("message", (m: Envelope) => {
    void (async () => {
      let reply: Reply;
      try {
        reply = { id: m.id, ok: true, result: await handler(m.body as never) };
      } catch (err) {
        reply = { id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
      }
      if (process.connected) process.send!(reply);
    })();
  });
  process.on("disconnect", () => {
    void (async () => {
      try {
        await onExit?.();
      } finally {
        process.exit(0);
      }
    })();
  });
}

export const benchDir = (): string => BENCH_DIR;
export const repoDir = (): string => dirname(BENCH_DIR);
