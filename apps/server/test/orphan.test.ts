import { type ChildProcess, spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { alive, topologyOnFreePorts } from "./helpers.js";

// A server group whose parent is killed (kill -9, so nothing is passed on) stops by itself.
const MAIN = resolve(import.meta.dirname, "../src/main.ts");
let dir: string | undefined;
let parent: ChildProcess | undefined;
let serverPid: number | undefined;

afterAll(async () => {
  parent?.kill("SIGKILL");
  if (serverPid !== undefined) {
    try {
      process.kill(serverPid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a server group whose parent dies", () => {
  it("notices it has a new parent and shuts down within seconds", async () => {
    const topo = await topologyOnFreePorts("monolith");
    dir = topo.dir;
    // The parent: a shell that starts the server, says its pid, and waits.
    parent = spawn("bash", ["-c", `node --import tsx "${MAIN}" --topology "${topo.file}" --data-dir "${join(dir, "data")}" & echo "pid $!"; wait`], {
      cwd: resolve(import.meta.dirname, ".."),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    await new Promise<void>((resolveReady, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start: ${out.slice(-500)}`)), 60_000);
      parent!.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const pid = /^pid (\d+)$/m.exec(out);
        if (pid) serverPid = Number(pid[1]);
        if (serverPid !== undefined && out.includes('"event":"listening"')) {
          clearTimeout(timer);
          resolveReady();
        }
      });
    });
    expect(alive(serverPid!)).toBe(true);
    parent.kill("SIGKILL");
    const deadline = Date.now() + 15_000;
    while (alive(serverPid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(alive(serverPid!), "the orphaned server is still running").toBe(false);
    expect(out).not.toContain("startup-failed");
  }, 90_000);
});
