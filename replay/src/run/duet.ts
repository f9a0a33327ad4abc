import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { simulateTrace } from "@flaplab/simulator";
import type { ReplayOptions } from "./options.js";
import { ReplayUsageError } from "./options.js";
import {
  checkDeployment,
  gatherRpc,
  nextRunNumber,
  oneRun,
  type ReplayReport,
  type RunContext,
  type RunSummary,
  runLine,
  StartBarrier,
  writeRun,
} from "./runner.js";

/**
 * A duet: two deployments play the same trace at the same time, each in a browser of its own, the
 * games started together (both pages logged in, then Space pressed on both), so both meet the same
 * moment of the machine. Run N of each is filed under the same run number; each summary names its
 * partner and how far apart the two games started. A failed attempt on either side repeats both.
 */
export async function replayDuet(pair: readonly [ReplayOptions, ReplayOptions], log: (line: string) => void): Promise<ReplayReport> {
  const names = pair.map((o) => o.deployment);
  if (names[0] === undefined || names[1] === undefined || names[0] === names[1]) {
    throw new ReplayUsageError(`a duet needs two deployments with different names, got ${names.join(" and ")}`);
  }
  const [reference, other] = names as [string, string];
  const topologies = await Promise.all(pair.map((o) => checkDeployment(o.url).then((c) => c.topology)));
  const stamp = Date.now().toString(36);
  const users = pair.map((_, i) => ({ name: `duet-${stamp}-${i}`, password: "replay-password-1", registered: false }));
  const report: ReplayReport = { runs: 0, ok: 0, failed: 0, retried: 0, folders: [] };
  const [first] = pair;
  const total = first.traces.length * first.runs;
  let index = 0;
  for (const trace of first.traces) {
    const simulated = simulateTrace(trace.trace);
    const expected = { score: simulated.score, ticks: simulated.ticks };
    const seedDirs = pair.map((o, i) => join(o.out, names[i]!, trace.seed.toString()));
    await Promise.all(seedDirs.map((d) => mkdir(d, { recursive: true })));
    // One number for both sides: run N of each is the pair.
    const base = Math.max(...(await Promise.all(seedDirs.map((d) => nextRunNumber(d)))));
    for (let r = 0; r < first.runs; r++) {
      index++;
      const runName = `run-${String(base + r).padStart(3, "0")}`;
      for (let attempt = 1; ; attempt++) {
        const started = Date.now();
        const barrier = new StartBarrier(2);
        const contexts: RunContext[] = pair.map((_, i) => ({
          deployment: names[i]!,
          topology: topologies[i]!,
          user: users[i]!,
          expected,
          attempt,
          barrier,
        }));
        const summaries = await Promise.all(pair.map((o, i) => oneRun(o, trace, contexts[i]!)));
        const bothOk = summaries.every((s) => s.status === "ok");
        const final = bothOk || attempt > first.retries;
        for (const [i, summary] of summaries.entries()) {
          const mine = contexts[i]!.startEpoch;
          const theirs = contexts[1 - i]!.startEpoch;
          const withDuet: RunSummary & { csv: string } = {
            ...summary,
            duet: {
              partner: names[1 - i]!,
              reference,
              startSkewMs: mine === undefined || theirs === undefined ? null : Math.round((mine - theirs) * 1000) / 1000,
            },
          };
          const folder = join(seedDirs[i]!, final ? runName : `${runName}.attempt-${attempt}`);
          const rpc = summary.status === "ok" || summary.gameId ? await gatherRpc(pair[i]!.rpcLogs, summary.gameId) : [];
          await writeRun(folder, withDuet, rpc);
          report.folders.push(folder);
          log(`run ${index}/${total}  ${names[i]}  ${runLine(withDuet, Date.now() - started)}`);
        }
        if (final) {
          report.runs += 2;
          for (const s of summaries) {
            if (s.status === "ok") report.ok++;
            else report.failed++;
          }
          if (attempt > 1) report.retried += 2;
          break;
        }
        log(`run ${index}/${total}  ${reference} + ${other}: one side failed, both play again`);
      }
    }
  }
  return report;
}
