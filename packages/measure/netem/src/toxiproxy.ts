import { spawn, type ChildProcess } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { resolve } from "node:path";
import { readText } from "@flaplab/settings";
import { TOXIPROXY } from "./settings.js";

/** The toxiproxy version FlapLab pins (installed by scripts/setup-toxiproxy.sh). */
export const TOXIPROXY_VERSION = "v2.12.0";
export const DEFAULT_TOXIPROXY_BIN = resolve(import.meta.dirname, "../../../../.tools/bin/toxiproxy-server");

export class ToxiproxyError extends Error {
  override readonly name = "ToxiproxyError";
}

/** A running toxiproxy server and its HTTP API. */
export interface Toxiproxy {
  readonly apiUrl: string;
  createProxy(name: string, listen: string, upstream: string): Promise<void>;
  addLatency(proxy: string, stream: "upstream" | "downstream", latencyMs: number, jitterMs: number): Promise<void>;
  removeProxy(name: string): Promise<void>;
  /** Turns a proxy off (it closes every connection through it and refuses new ones) or on again. */
  setEnabled(name: string, enabled: boolean): Promise<void>;
  stop(): Promise<void>;
}

/** Finds the toxiproxy binary: FLAPLAB_TOXIPROXY, or the one scripts/setup-toxiproxy.sh installs. */
export async function findToxiproxy(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const bin = readText(env, TOXIPROXY) ?? DEFAULT_TOXIPROXY_BIN;
  try {
    await access(bin, constants.X_OK);
    return bin;
  } catch {
    throw new ToxiproxyError(
      `latency emulation needs toxiproxy ${TOXIPROXY_VERSION}, not found at ${bin}: run \`pnpm run setup:toxiproxy\` (needs Go) or set ${TOXIPROXY.name}`,
    );
  }
}

/** Starts toxiproxy on a loopback port and waits for its API. */
export async function startToxiproxy(bin: string, port: number): Promise<Toxiproxy> {
  const child: ChildProcess = spawn(bin, ["-host", "127.0.0.1", "-port", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const apiUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new ToxiproxyError(`toxiproxy exited (${code}): ${stderr.trim()}`))),
  );
  exited.catch(() => undefined);
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const res = await Promise.race([fetch(`${apiUrl}/version`, { signal: AbortSignal.timeout(500) }), exited]);
      if (res.ok) break;
    } catch (err) {
      if (err instanceof ToxiproxyError) throw err;
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new ToxiproxyError(`toxiproxy did not answer on ${apiUrl} within 10 s`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const call = async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await fetch(apiUrl + path, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new ToxiproxyError(`toxiproxy ${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  };
  return {
    apiUrl,
    createProxy: (name, listen, upstream) => call("POST", "/proxies", { name, listen, upstream, enabled: true }),
    addLatency: (proxy, stream, latencyMs, jitterMs) =>
      call("POST", `/proxies/${encodeURIComponent(proxy)}/toxics`, {
        name: `latency_${stream}`,
        type: "latency",
        stream,
        toxicity: 1,
        attributes: { latency: latencyMs, jitter: jitterMs },
      }),
    removeProxy: (name) => call("DELETE", `/proxies/${encodeURIComponent(name)}`),
    setEnabled: (name, enabled) => call("POST", `/proxies/${encodeURIComponent(name)}`, { enabled }),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await Promise.race([new Promise((r) => child.once("exit", r)), new Promise((r) => setTimeout(r, 2000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}
