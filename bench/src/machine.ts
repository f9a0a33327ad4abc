import { availableParallelism, cpus, totalmem } from "node:os";

export interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly memoryGiB: number;
  readonly platform: string;
}

export function describeMachine(): Machine {
  const list = cpus();
  return {
    cores: availableParallelism(),
    cpuModel: list[0]?.model.trim() ?? "unknown",
    node: process.version,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${process.platform}-${process.arch}`,
  };
}

export function machineLine(m: Machine): string {
  return `Machine: ${m.cores} cores, ${m.cpuModel}, Node ${m.node}, ${m.memoryGiB} GiB, ${m.platform}`;
}
