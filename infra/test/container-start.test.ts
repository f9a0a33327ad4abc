// The image's entry point (apps/server/container-start.sh), run here with a stand-in for the server:
// the call log the server writes must reach stdout (CloudWatch in the cloud), one record per line.
import { spawn } from "node:child_process";
import { appendFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = resolve(import.meta.dirname, "../../apps/server/container-start.sh");
let dirs: string[] = [];

afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

/** Runs the entry point with `command`, collects stdout until `until` holds or 10 s pass, then ends the whole process group. */
async function runEntry(
  command: string,
  env: Record<string, string>,
  until: (stdout: string) => boolean,
): Promise<{ stdout: string; exited: boolean }> {
  const child = spawn("sh", [SCRIPT, "sh", "-c", command], {
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  let exited = false;
  child.on("exit", () => (exited = true));
  const deadline = Date.now() + 10_000;
  while (!until(stdout) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
  return { stdout, exited };
}

const record = (i: number): string =>
  JSON.stringify({ level: 30, time: 1_700_000_000_000 + i, src: "engine", dst: "score", dstVerb: "RecordRun", gameId: `g${i}`, durationNs: 1000 + i, side: "client", msg: "rpc" });

describe("container-start.sh", () => {
  it("copies the call log to stdout, from its first line and as it grows, beside the server's own output", async () => {
    const data = await mkdtemp(join(tmpdir(), "flaplab-entry-"));
    dirs.push(data);
    const log = join(data, "logs", "rpc-multiregion-engine.ndjson");
    // The stand-in server: prints a line, creates its call log a moment later, appends more later still.
    const server = [
      `echo '{"msg":"server listening"}'`,
      "sleep 0.3",
      `mkdir -p '${data}/logs'`,
      `printf '%s\\n' '${record(1)}' '${record(2)}' > '${log}'`,
      "sleep 0.8",
      `printf '%s\\n' '${record(3)}' >> '${log}'`,
      "sleep 30",
    ].join("; ");
    const { stdout } = await runEntry(server, { FLAPLAB_DATA_DIR: data }, (out) => out.includes('"gameId":"g3"'));
    const lines = stdout.split("\n").filter((l) => l !== "");
    expect(lines).toContain('{"msg":"server listening"}');
    const rpc = lines.filter((l) => l.includes('"msg":"rpc"'));
    expect(rpc).toEqual([record(1), record(2), record(3)]);
    // Each line is whole JSON (no line split or merged with another).
    for (const l of lines) expect(() => JSON.parse(l) as unknown).not.toThrow();
  });

  it("copies nothing with FLAPLAB_CALL_LOG_STDOUT=0", async () => {
    const data = await mkdtemp(join(tmpdir(), "flaplab-entry-"));
    dirs.push(data);
    await mkdir(join(data, "logs"));
    await appendFile(join(data, "logs", "rpc-monolith-monolith.ndjson"), `${record(1)}\n`);
    const { stdout } = await runEntry("sleep 1.5; echo done", { FLAPLAB_DATA_DIR: data, FLAPLAB_CALL_LOG_STDOUT: "0" }, (out) =>
      out.includes("done"),
    );
    expect(stdout.trim()).toBe("done");
  });

  it("writes FLAPLAB_TOPOLOGY_JSON to a file and points FLAPLAB_TOPOLOGY at it, then runs the command in its place", async () => {
    const data = await mkdtemp(join(tmpdir(), "flaplab-entry-"));
    dirs.push(data);
    const topology = JSON.stringify({ name: "multiregion", groups: { engine: { components: ["engine"] } } });
    const { stdout, exited } = await runEntry(
      `echo "topology=$FLAPLAB_TOPOLOGY"; cat "$FLAPLAB_TOPOLOGY"; echo; echo "end"`,
      { FLAPLAB_DATA_DIR: data, FLAPLAB_TOPOLOGY: "multiregion", FLAPLAB_TOPOLOGY_JSON: topology, FLAPLAB_CALL_LOG_STDOUT: "0" },
      (out) => out.includes("end"),
    );
    expect(stdout).toContain("topology=/tmp/flaplab-topology.json");
    expect(stdout).toContain(topology);
    await new Promise((r) => setTimeout(r, 100));
    expect(exited).toBe(true);
  });
});
