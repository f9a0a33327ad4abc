import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateReport } from "../../src/report/index.js";
import { loadTrace, parseFault, type FaultKind } from "../../src/run/options.js";
import { longestFrameGapMs, replay, type RunSummary } from "../../src/run/runner.js";
import { parseStudyArgs } from "../../src/study/study.js";
import { startStudyDeployment } from "../../src/study/deployment.js";
import { faultInjector } from "../../src/study/faults.js";
import { REPO, topologyOnFreePorts } from "./free-topology.js";

// The page in Chromium survives its engine: microservices-sharded, the easy trace pressed on the
// game's tick clock, the game's engine drained (SIGTERM) or killed (SIGKILL) at tick 150.
const EASY = join(REPO, "replay/traces/6977347407732442987.csv");
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe("fault options", () => {
  it("parse <kind>@<tick>, and refuse anything else with what a fault looks like", () => {
    expect(parseFault("engine-kill@200")).toEqual({ kind: "engine-kill", tick: 200 });
    expect(parseFault(" score-kill@1 ")).toEqual({ kind: "score-kill", tick: 1 });
    for (const bad of ["engine-kill", "engine-kill@0", "engine-kill@x", "disk-fill@10", "@10"]) {
      expect(() => parseFault(bad)).toThrow(/--fault must be <kind>@<tick> with a kind of engine-kill, engine-drain, music-kill, score-kill/);
    }
  });

  it("make the study run microservices-sharded unless deployments are named", () => {
    expect(parseStudyArgs(["--fault", "engine-drain@120"], REPO, REPO)).toMatchObject({
      deployments: ["microservices-sharded"],
      fault: { kind: "engine-drain", tick: 120 },
    });
    expect(parseStudyArgs(["--fault", "music-kill@50", "--deployments", "microservices"], REPO, REPO).deployments).toEqual(["microservices"]);
    expect(parseStudyArgs([], REPO, REPO).fault).toBeUndefined();
  });

  it("measure the pause as the longest wait between frames of new ticks (acks and repeated ticks do not count)", () => {
    const csv = [
      "type,direction,time,seq,tick,reflected_seq,bytes,sound,ms,note,kind",
      "frame,recv,100,,1,1,20,,,,tick",
      "frame,recv,133,,2,1,20,,,,tick",
      "frame,recv,140,,2,2,12,,,,ack",
      "close,recv,150,,,,,,,game moved at tick 2,",
      "frame,recv,190,,2,2,300,,,,tick",
      "frame,recv,210,,3,2,20,,,,tick",
      "frame,recv,243,,4,2,20,,,,tick",
    ].join("\n");
    expect(longestFrameGapMs(csv)).toBe(77);
    expect(longestFrameGapMs("type,time\n")).toBeNull();
  });
});

describe("a replay with an engine fault, in Chromium", () => {
  it("drains, then kills, the game's engine at tick 150: both runs end 7 at tick 402, recorded, with the pause reported", async () => {
    const topo = await topologyOnFreePorts("microservices-sharded");
    const deployment = await startStudyDeployment(topo.file, join(topo.dir, "data"));
    cleanups.push(async () => {
      await deployment.stop();
      await rm(topo.dir, { recursive: true, force: true });
    });
    const out = join(topo.dir, "runs");
    const lines: string[] = [];
    const summaries: RunSummary[] = [];
    for (const [kind, link] of [["engine-drain", "webtransport"], ["engine-kill", "websocket"]] as const) {
      const fault = { kind: kind as FaultKind, tick: 150, inject: faultInjector(kind, deployment, (l) => lines.push(l)) };
      const report = await replay(
        {
          url: deployment.webUrl,
          traces: [await loadTrace(EASY)],
          runs: 1,
          out,
          deployment: `sharded+${kind}`,
          retries: 0,
          rpcLogs: [deployment.logsDir],
          chromium: process.env["FLAPLAB_CHROMIUM"] ?? "/usr/bin/chromium",
          stockScheduling: false,
          slackMs: 15_000,
          link,
          fault,
        },
        (l) => lines.push(l),
      );
      expect(report, lines.join("\n")).toMatchObject({ runs: 1, ok: 1, failed: 0 });
      summaries.push(JSON.parse(await readFile(join(report.folders[0]!, "summary.json"), "utf8")) as RunSummary);
    }
    for (const [i, signal] of ["SIGTERM", "SIGKILL"].entries()) {
      const s = summaries[i]!;
      expect(s).toMatchObject({ status: "ok", score: 7, ticks: 402 });
      expect(s.fault).toMatchObject({ tick: 150, reconnections: 1, scoreMatched: true, recorded: true });
      expect(s.fault!.action).toMatch(new RegExp(`^${signal} engine-\\d \\(pid \\d+\\)$`));
      expect(s.fault!.injectedAtTick).toBeGreaterThanOrEqual(150);
      // A pause, and one a player gets over: well under the second a resume may take.
      expect(s.fault!.pauseMs).toBeGreaterThan(33);
      expect(s.fault!.pauseMs).toBeLessThan(1000);
    }
    console.log(`pauses: drain ${summaries[0]!.fault!.pauseMs} ms, kill ${summaries[1]!.fault!.pauseMs} ms`);
    const { files } = await generateReport({ inputs: [out], outDir: join(topo.dir, "report") });
    const md = await readFile(files.markdown, "utf8");
    expect(md).toMatch(/\| run-001 \| engine-drain@150 \| SIGTERM engine-\d \(pid \d+\) \| yes \| yes \| \d+ \|/);
    expect(md).toMatch(/\| run-001 \| engine-kill@150 \| SIGKILL engine-\d \(pid \d+\) \| yes \| yes \| \d+ \|/);
  }, 240_000);
});
