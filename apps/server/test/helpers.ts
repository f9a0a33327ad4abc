import { readFile, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { repositoryTopologyOnFreePorts as topologyOnFreePorts } from "@flaplab/deployment";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { type Deployment, startDeployment } from "@flaplab/deployment";
import { loadTopology, type Topology } from "@flaplab/runtime";
import { pino } from "pino";
import { type RunningServer, startServer } from "../src/server.js";

export const REPO = resolve(import.meta.dirname, "../../..");

/** A copy of a repository topology with every group (and the web client) moved to a free loopback port. */
export { repositoryTopologyOnFreePorts as topologyOnFreePorts } from "@flaplab/deployment";

/** Call records of a call-log file. */
export async function readCallLog(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r["msg"] === "rpc");
}

/** A monolith on free ports, with `usernames` registered: their tokens in that order. */
export async function startMonolith(
  usernames: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ server: RunningServer; baseUrl: string; tokens: string[]; stop(): Promise<void> }> {
  const topo = await topologyOnFreePorts("monolith");
  // The server reads FLAPLAB_* variables while it starts.
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let server: RunningServer;
  try {
    server = await startServer({ topology: await loadTopology(topo.file), group: "monolith", dataDir: topo.dir, logger: pino({ level: "silent" }) });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const auth = createClient(AuthService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  const tokens: string[] = [];
  for (const username of usernames) tokens.push((await auth.register({ username, password: "a long enough password" })).session!.token);
  return {
    server,
    baseUrl,
    tokens,
    async stop() {
      await server.stop();
      await rm(topo.dir, { recursive: true, force: true });
    },
  };
}

/**
 * A repository topology on free ports, all its processes started (no web client), with `env` on
 * top of this process's environment; `url(group)` is a group's Connect URL, `register` signs a
 * player up and returns their token.
 */
export async function startTopology(
  name: string,
  env: Readonly<Record<string, string>> = {},
): Promise<{ deployment: Deployment; topology: Topology; url(group: string): string; register(username: string): Promise<string> }> {
  const topo = await topologyOnFreePorts(name);
  const topology = await loadTopology(topo.file);
  const deployment = await startDeployment(topo.file, { dataDir: resolve(topo.dir, "data"), web: "none", env: { ...process.env, ...env } });
  await deployment.ready;
  const url = (group: string) => `http://${topology.groups.find((g) => g.name === group)!.address}`;
  const auth = createClient(AuthService, createConnectTransport({ baseUrl: url("auth"), httpVersion: "1.1" }));
  return {
    deployment,
    topology,
    url,
    register: async (username) => (await auth.register({ username, password: "a long enough password" })).session!.token,
  };
}

/** Whether process `pid` is still running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
