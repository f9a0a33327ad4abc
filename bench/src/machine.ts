import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";

export interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly memoryGiB: number;
  readonly platform: string;
  /** 1-minute load average when the run started (the machine is shared: other work shows here). */
  readonly loadAvg1m: number;
  /** The repository's commit, when git can tell. */
  readonly commit: string | null;
}

export function describeMachine(): Machine {
  const list = cpus();
  return {
    cores: availableParallelism(),
    cpuModel: list[0]?.model.trim() ?? "unknown",
    node: process.version,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${process.platform}-${process.arch}`,
    loadAvg1m: Math.round(loadavg()[0]! * 100) / 100,
    commit: gitCommit(),
  };
}

function gitCommit(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: import.meta.dirname, stdio: ["ignore", "pipe", "ignore"] }).toString().trim() || null;
  } catch {
    return null;
  }
}

export function machineLine(m: Machine): string {
  return `Machine: ${m.cores} cores, ${m.cpuModel}, Node ${m.node}, ${m.memoryGiB} GiB, ${m.platform}; load average ${m.loadAvg1m} at start${m.commit ? `; commit ${m.commit}` : ""}`;
}

/**
 * Bytes the loopback interface has carried (`lo` in /proc/net/dev, received = sent), or null where
 * there is no such file. The difference over a measurement is every packet of it: IP and TCP
 * headers, acknowledgements and both directions, and anything else on loopback meanwhile.
 */
export function loopbackBytes(): number | null {
  try {
    const line = readFileSync("/proc/net/dev", "utf8")
      .split("\n")
      .find((l) => l.trim().startsWith("lo:"));
    if (!line) return null;
    const rx = Number(line.trim().slice(3).trim().split(/\s+/)[0]);
    return Number.isFinite(rx) ? rx : null;
  } catch {
    return null;
  }
}
