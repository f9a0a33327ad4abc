// A real monolith in the test process on free loopback ports. The server is imported by path,
// as game-client's tests do: it is not a dependency of the load generator.
import { rm } from "node:fs/promises";
import { repositoryTopologyOnFreePorts } from "@flaplab/deployment";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { startServer } from "../../server/src/server.js";

export interface Monolith {
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/** Starts a monolith; `env` is set in this process's environment while it starts (its limits are read then). */
export async function startMonolith(env: Readonly<Record<string, string>> = {}): Promise<Monolith> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const topo = await repositoryTopologyOnFreePorts("monolith");
    const server = await startServer({ topology: await loadTopology(topo.file), group: "monolith", dataDir: topo.dir, logger: pino({ level: "silent" }) });
    return {
      baseUrl: `http://127.0.0.1:${server.port}`,
      async stop() {
        await server.stop();
        await rm(topo.dir, { recursive: true, force: true });
      },
    };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Runs the CLI in this process, collecting what it prints. */
export async function runCli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { runLoadCli } = await import("../src/main.js");
  let stdout = "";
  let stderr = "";
  const code = await runLoadCli(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), cwd: process.cwd() });
  return { code, stdout, stderr };
}
