// The whole suite: local targets, then a real monolith attacked through every RPC and its stream
// port, then the check that the runs stored before the attack are all still on the scoreboard.
import { closeClients } from "./http.js";
import { formatTable, runTarget, type Finding, type Row, type Target } from "./runner.js";
import { FuzzServer } from "./server.js";
import { delimitedTarget, frameTarget, topologyTarget, traceTarget } from "./targets/local.js";
import { rawTarget } from "./targets/raw.js";
import { rpcTargets } from "./targets/rpc.js";
import { websocketTargets } from "./targets/websocket.js";

export const STORED_RUNS = 5;

export interface FuzzOptions {
  readonly cases: number;
  readonly seed: number;
  /** Run only targets whose name contains one of these. */
  readonly filter?: readonly string[] | undefined;
  readonly only?: readonly number[] | undefined;
  readonly log?: (line: string) => void;
  /** Also log how often each outcome was seen, per target. */
  readonly details?: boolean;
}

export interface FuzzReport {
  readonly rows: Row[];
  readonly findings: Finding[];
  readonly intact: number;
  readonly stored: number;
  readonly restarts: number;
  readonly table: string;
  readonly ok: boolean;
}

export function allTargets(): Target<unknown>[] {
  return [delimitedTarget, frameTarget, traceTarget, topologyTarget, ...rpcTargets(), rawTarget, ...websocketTargets()] as Target<unknown>[];
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const log = opts.log ?? (() => undefined);
  const targets = allTargets().filter((t) => !opts.filter?.length || opts.filter.some((f) => t.name.includes(f)));
  if (targets.length === 0) throw new Error(`no target matches ${opts.filter?.join(", ")}`);
  const rows: Row[] = [];
  let server: FuzzServer | undefined;
  let intact = 0;
  try {
    if (targets.some((t) => t.remote)) {
      server = await FuzzServer.start();
      await server.recordRuns(STORED_RUNS);
      log(`monolith on ${server.baseUrl} (streams on :${server.streamPort}), ${STORED_RUNS} runs stored`);
    }
    for (const target of targets) {
      const started = Date.now();
      if (target.remote) await server!.nextPlayer();
      const row = await runTarget(target, { cases: opts.cases, seed: opts.seed, server, only: opts.only });
      rows.push(row);
      if (opts.details) for (const [d, n] of [...row.details].sort((a, b) => b[1] - a[1]).slice(0, 25)) log(`    ${String(n).padStart(6)}  ${d}`);
      log(`${target.name}: ${row.cases} cases in ${((Date.now() - started) / 1000).toFixed(1)} s, ${row.crashes} crashes, ${row.hangs} hangs`);
    }
    if (server) intact = await server.storedRunsIntact();
  } finally {
    closeClients();
    await server?.stop();
  }
  const stored = server ? STORED_RUNS : 0;
  const findings = rows.flatMap((r) => r.findings);
  const table = formatTable(rows);
  log("");
  log(table);
  log("");
  log(`stored runs intact: ${intact}/${stored}`);
  if (server && server.restarts > 0) log(`the monolith was restarted ${server.restarts} times after a crash or hang`);
  for (const f of findings) log(`${f.kind.toUpperCase()} ${f.target} case ${f.index} (seed ${opts.seed}): ${f.detail}\n  input: ${f.input}`);
  // A target that never accepted a case never reached the code behind its checks (a full run's
  // cases once used up the fuzz player's quota of games in progress, and only 401s came back).
  const unexercised = opts.only === undefined ? rows.filter((r) => r.cases >= 100 && r.accepted === 0) : [];
  for (const r of unexercised) log(`NOT EXERCISED ${r.target}: no case of ${r.cases} was accepted, so its success path never ran`);
  const ok = findings.length === 0 && intact === stored && unexercised.length === 0;
  return { rows, findings, intact, stored, restarts: server?.restarts ?? 0, table, ok };
}
