// Child process: the WorldGen component (stand-in and real) behind two real hosts on loopback.
import { createHost, type Host } from "@flaplab/host";
import { createRuntime, type Runtime } from "@flaplab/runtime";
import { worldgenComponent } from "@flaplab/worldgen";
import { pino } from "pino";
import { serveRequests } from "./child.js";
import { startProfile, stopProfile } from "./inspector-profile.js";
import { benchKeys, serverTopology, type Workload, worldGenFor } from "./rpc-fixture.js";

export type RpcServerRequest =
  | { type: "start"; keysDir: string }
  | { type: "cpu" }
  | { type: "profile-start" }
  | { type: "profile-stop"; file: string };
export interface RpcServerPorts {
  readonly trivial: number;
  readonly worldgen: number;
}
/** Process CPU time (user + system) and wall time, µs. */
export interface CpuSample {
  readonly cpuUs: number;
  readonly wallUs: number;
}

const hosts: Host[] = [];
const runtimes: Runtime[] = [];

async function start(keysDir: string): Promise<RpcServerPorts> {
  const { verifier } = await benchKeys(keysDir);
  const logger = pino({ level: "silent" });
  const ports: Partial<Record<Workload, number>> = {};
  for (const workload of ["trivial", "worldgen"] as const) {
    const runtime = createRuntime({ topology: serverTopology(), group: "server", verifier });
    runtime.mount(worldgenComponent, worldGenFor(workload));
    const host = await createHost({ runtime, logger });
    ports[workload] = await host.listen(0);
    hosts.push(host);
    runtimes.push(runtime);
  }
  return ports as RpcServerPorts;
}

serveRequests(
  async (req: RpcServerRequest) => {
    if (req.type === "start") return start(req.keysDir);
    if (req.type === "profile-start") return startProfile();
    if (req.type === "profile-stop") return stopProfile(req.file);
    const cpu = process.cpuUsage();
    return { cpuUs: cpu.user + cpu.system, wallUs: performance.now() * 1000 } satisfies CpuSample;
  },
  async () => {
    await Promise.all(hosts.map((h) => h.close()));
    for (const r of runtimes) r.close();
  },
);
