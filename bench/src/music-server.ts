// Child process for section 7: the real music component behind a real host on loopback, with an
// open music stream per bench game whose sink counts the clips (a browser would play them).
import { createHost, type Host } from "@flaplab/host";
import { createMusic, createMusicStreams, musicComponent } from "@flaplab/music";
import { createRuntime, type Runtime } from "@flaplab/runtime";
import { pino } from "pino";
import { serveRequests } from "./child.js";
import { benchKeys, musicTopology } from "./rpc-fixture.js";
import type { CpuSample } from "./rpc-server.js";

export type MusicServerRequest = { type: "start"; keysDir: string; games: number } | { type: "cpu" } | { type: "clips" };

let host: Host | undefined;
let runtime: Runtime | undefined;
let clips = 0;

serveRequests(
  async (req: MusicServerRequest) => {
    if (req.type === "start") {
      const { verifier } = await benchKeys(req.keysDir);
      const streams = createMusicStreams();
      for (let i = 0; i < req.games; i++) streams.open(`g${i}`, () => void clips++);
      runtime = createRuntime({ topology: musicTopology(1), group: "music", verifier });
      runtime.mount(musicComponent, createMusic({ streams }));
      host = await createHost({ runtime, logger: pino({ level: "silent" }) });
      return host.listen(0);
    }
    if (req.type === "clips") return clips;
    const cpu = process.cpuUsage();
    return { cpuUs: cpu.user + cpu.system, wallUs: performance.now() * 1000 } satisfies CpuSample;
  },
  async () => {
    await host?.close();
    runtime?.close();
  },
);
