import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The package's folder, and the repository's. */
const PACKAGE = resolve(import.meta.dirname, "..");
const REPO = resolve(PACKAGE, "../../..");

/** The runner, as `pnpm setup:conformance` installs it. */
export const RUNNER = join(REPO, ".tools/bin/connectconformance");

export type Side = "server" | "client";
export const PROTOCOLS = ["PROTOCOL_CONNECT", "PROTOCOL_GRPC", "PROTOCOL_GRPC_WEB"] as const;
export type ProtocolName = (typeof PROTOCOLS)[number];

export interface SuiteResult {
  readonly side: Side;
  readonly protocol: ProtocolName;
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  /** Names of the failing cases, as the runner prints them. */
  readonly failures: readonly string[];
  /** What the runner printed (stdout and stderr), for a failing run's report. */
  readonly output: string;
}

export interface RunOptions {
  /** Longest a run may take before it is killed (default 5 minutes). */
  readonly timeoutMs?: number;
}

/**
 * Runs the suite for one side (our server with the reference client, or our client with the
 * reference server) and one protocol: config/<side>.yaml limited to that protocol. Servers are
 * started one at a time and RPCs issued four at a time, to leave the machine's cores to others.
 */
export async function runSuite(side: Side, protocol: ProtocolName, options: RunOptions = {}): Promise<SuiteResult> {
  if (!existsSync(RUNNER)) throw new Error(`${RUNNER} is missing: run pnpm setup:conformance`);
  const dir = await mkdtemp(join(tmpdir(), "flaplab-conformance-"));
  try {
    const config = join(dir, `${side}-${protocol}.yaml`);
    await writeFile(config, limitToProtocol(await readFile(join(PACKAGE, "config", `${side}.yaml`), "utf8"), protocol));
    const underTest = [process.execPath, "--import", "tsx", join(PACKAGE, "bin", `${side}-under-test.ts`)];
    const args = ["--mode", side, "--conf", config, "--max-servers", "1", ...(side === "server" ? ["--parallel", "4"] : []), "--", ...underTest];
    const { code, output } = await run(RUNNER, args, options.timeoutMs ?? 300_000);
    const counts = parseCounts(output);
    if (counts === undefined) throw new Error(`the runner exited with ${code} without a summary:\n${output}`);
    return { side, protocol, ...counts, failures: failedCases(output), output };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A config's `protocols:` line replaced by one protocol. */
export function limitToProtocol(yaml: string, protocol: ProtocolName): string {
  const out = yaml.replace(/^(\s*protocols:\s*).*$/m, `$1[${protocol}]`);
  if (out === yaml) throw new Error("the config has no protocols: line");
  return out;
}

/** The runner's closing summary: `Total cases: N` and `P passed, F failed`. */
export function parseCounts(output: string): { total: number; passed: number; failed: number } | undefined {
  const total = /^Total cases: (\d+)$/m.exec(output);
  const summary = /^(\d+) passed, (\d+) failed$/m.exec(output);
  if (total === null || summary === null) return undefined;
  return { total: Number(total[1]), passed: Number(summary[1]), failed: Number(summary[2]) };
}

/** The names of the cases the runner reports as `FAILED: <name>:`. */
export function failedCases(output: string): string[] {
  return [...output.matchAll(/^FAILED: (.+):$/gm)].map((m) => m[1]!);
}

/** What the runner says about a failing case: the indented lines after its `FAILED:` line. */
export function failureDetail(output: string, name: string): string {
  const lines = output.split("\n");
  const at = lines.indexOf(`FAILED: ${name}:`);
  if (at < 0) return "";
  const detail: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith("\t")) break;
    detail.push(line);
  }
  return detail.join("\n");
}

function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
}
