import { join } from "node:path";
import { generateReport, type ReportResult } from "../../src/report/index.js";
import { rttRows, tempDir, tickFrames, writeRun, type Row } from "./fixtures.js";
import { FG_SEED, writeFlappyGoData } from "./flappygo-fixture.js";

/** A deterministic pseudo-random sequence (so sample reports are reproducible). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A plausible game log: 33 ms ticks with jitter, inputs acked and sounded after `delay` ms. */
export function gameRows(seed: number, delay: number, inputs = 15): Row[] {
  const rnd = lcg(seed);
  const gaps = Array.from({ length: 400 }, () => 33 + (rnd() - 0.5) * 2 + (rnd() < 0.01 ? 10 : 0));
  const ticks = tickFrames(500, gaps);
  const rows: Row[] = [...rttRows(10 + rnd() * 5, 3 + rnd() * 2)];
  const acks: Row[] = [];
  for (let j = 1; j <= inputs; j++) {
    const sent = ticks[20 * j]!.time + rnd() * 33;
    const effect = delay + rnd() * delay;
    rows.push({ type: "input", direction: "send", time: sent, seq: j, bytes: 12 });
    acks.push({ type: "frame", direction: "recv", time: sent + effect, tick: 20 * j, reflectedSeq: j, bytes: 40, kind: "ack" });
    rows.push({ type: "audio", direction: "recv", time: sent + effect + 1 + rnd(), seq: j, tick: 20 * j, sound: "flap", bytes: 30 });
  }
  for (const t of ticks) t.reflectedSeq = acks.filter((a) => a.time <= t.time).length;
  return [...rows, ...ticks, ...acks];
}

/** Two FlapLab deployments (3 runs each, one failed) plus a FlappyGo folder, reported into a temp dir. */
export async function sampleReport(): Promise<ReportResult> {
  const root = await tempDir();
  const out = await tempDir("flaplab-report-out-");
  const deployments = [
    { name: "monolith", delay: 0.8, rpc: 0.05 },
    { name: "microservices", delay: 2.5, rpc: 1.6 },
  ];
  for (const [d, dep] of deployments.entries()) {
    for (let run = 1; run <= 3; run++) {
      const failed = dep.name === "microservices" && run === 3;
      await writeRun(join(root, "runs"), {
        deployment: dep.name,
        seed: FG_SEED,
        run,
        rows: gameRows(100 * d + run, dep.delay),
        ...(failed ? { status: "failed" as const, failure: { reason: "browser crashed: target closed", stage: "play" }, score: 2 } : {}),
        rpc: [
          ...Array.from({ length: 15 }, (_, i) => ({ src: "engine", dst: "music", dstVerb: "PlaySound", durationNs: (dep.rpc + i * 0.01) * 1e6 })),
          ...Array.from({ length: 7 }, (_, i) => ({ src: "engine", dst: "score", dstVerb: "RecordScore", durationNs: (dep.rpc * 2 + i * 0.02) * 1e6 })),
          { src: "initiator", dst: "worldgen", dstVerb: "GenerateWorld", durationNs: dep.rpc * 3e6 },
        ],
      });
    }
  }
  const fg = await writeFlappyGoData(join(root, "flappygo"));
  return generateReport({ inputs: [join(root, "runs")], flappyGo: [fg], outDir: out });
}
