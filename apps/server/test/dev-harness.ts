import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";

// `pnpm dev <topology>` as a user runs it: the supervisor, its children, their logs.
export const DEV = resolve(import.meta.dirname, "../src/dev.ts");

export interface DevRun {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

const running: DevRun[] = [];
export const dirs: string[] = [];

/** Kills the runs started and removes the folders made by the test that just ended: for `afterEach`. */
export async function cleanUp(): Promise<void> {
  for (const run of running.splice(0)) {
    run.child.kill("SIGKILL");
  }
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
}

export async function startDev(topologyFile: string, dataDir: string, env: Record<string, string> = {}): Promise<DevRun> {
  const child = spawn(process.execPath, ["--import", "tsx", DEV, topologyFile, "--data-dir", dataDir, "--no-web"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const run = { child, lines, exited };
  running.push(run);
  const up = new Promise<void>((resolveUp, reject) => {
    for (const s of [child.stdout!, child.stderr!]) {
      createInterface({ input: s }).on("line", (line) => {
        lines.push(line);
        if (/\[dev\] .* is up/.test(line)) resolveUp();
      });
    }
    void exited.then((code) => reject(new Error(`dev exited early (${code}):\n${lines.join("\n")}`)));
  });
  await up;
  return run;
}

export async function playOneStart(addresses: Record<string, string>, authGroup: string, initiatorGroup: string) {
  const auth = createClient(AuthService, createConnectTransport({ baseUrl: `http://${addresses[authGroup]}`, httpVersion: "1.1" }));
  const { session } = await auth.register({ username: "dev-user", password: "long enough password" });
  const initiator = createClient(
    InitiatorService,
    createConnectTransport({ baseUrl: `http://${addresses[initiatorGroup]}`, httpVersion: "1.1" }),
  );
  return initiator.startGame({ seed: 6977347407732442987n }, { headers: { authorization: `Bearer ${session!.token}` } });
}
