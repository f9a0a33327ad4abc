// Child processes of the benchmark: tsx scripts that answer requests over the IPC channel.
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { BENCH_CHILD } from "./settings.js";

const BENCH_DIR = resolve(import.meta.dirname, "..");

export interface Envelope {
  readonly id: number;
  readonly body: unknown;
}

export interface Reply {
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
    env: { ...process.env, ...env, [BENCH_CHILD.name]: "1" },
  });
  proc.stdout?.on("data", (d: Buffer) => process.stderr.write(d));
  const channel = requestChannel(script, proc, (envelope) => proc.send(envelope));
  proc.on("message", (m: Reply) => channel.answer(m));
  await spawned(proc);
  return childOf(proc, channel, async () => {
    if (proc.connected) proc.disconnect();
    await channel.waitExit(3000);
    if (!channel.exited()) proc.kill("SIGTERM");
    await channel.waitExit(3000);
    if (!channel.exited()) proc.kill("SIGKILL");
    await channel.waitExit();
  });
}

/** A started child as the bench drives it: its requests go through `channel`; `end` stops it unless it has exited. */
export function childOf(proc: ChildProcess, channel: ReturnType<typeof requestChannel>, end: () => Promise<void>): Child {
  return {
    pid: proc.pid!,
    request: channel.request,
    async stop() {
      if (!channel.exited()) await end();
    },
  };
}

/** Resolves once `proc` has started (rejects if it could not be). */
export function spawned(proc: ChildProcess): Promise<void> {
  return new Promise<void>((ok, fail) => {
    proc.once("spawn", ok);
    proc.once("error", fail);
  });
}

/**
 * The parent's side of a child's requests, whatever carries them: numbered envelopes out through
 * `send`, answers in through `answer`, each request failing after its timeout or when `proc`
 * exits first.
 */
export function requestChannel(
  name: string,
  proc: ChildProcess,
  send: (envelope: Envelope) => void,
): {
  request<T>(body: object, timeoutMs?: number): Promise<T>;
  answer(reply: Reply): void;
  exited(): boolean;
  /** Resolves when the child has exited, or after `ms` (default: only when it has exited). */
  waitExit(ms?: number): Promise<void>;
} {
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
  return {
    request<T>(body: object, timeoutMs = 120_000): Promise<T> {
      if (exited) return Promise.reject(new Error(exited));
      const id = nextId++;
      return new Promise<T>((ok, fail) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          fail(new Error(`${name}: no answer to ${JSON.stringify(body).slice(0, 80)} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: ok as (v: unknown) => void, reject: fail, timer });
        send({ id, body });
      });
    },
    answer(reply: Reply): void {
      const p = pending.get(reply.id);
      if (!p) return;
      pending.delete(reply.id);
      clearTimeout(p.timer);
      if (reply.ok) p.resolve(reply.result ?? null);
      else p.reject(new Error(`${name}: ${reply.error}`));
    },
    exited: () => exited !== undefined,
    waitExit: (ms?: number) => (ms === undefined ? exitedPromise : Promise.race([exitedPromise, new Promise<void>((r) => setTimeout(r, ms).unref())])),
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
