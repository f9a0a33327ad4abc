// Downloads a deployed stage's call logs from CloudWatch Logs (the log groups /flaplab/<stage>/<group>/…
// in every region of the stage's plan) and writes them where `pnpm report` finds them:
//   <out>/rpc-logs/rpc-<topology>-<group>.ndjson   the call logs, as the servers wrote them
//   <out>/**/run-NNN/rpc.ndjson                    each replay run's game records (summary.json's rpcRecords too)
// Usage: fetch-logs --stage <stage> --out <dir> [--since <ISO time | 6h | 2d>] [--until <ISO time>]
//                   [--runs <dir>] [--max-events <n>] [--default-region <r>]
// AWS credentials come from the usual places (AWS_PROFILE, environment, SSO); nothing is written to AWS.
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { CloudWatchLogsClient, paginateDescribeLogGroups, paginateFilterLogEvents } from "@aws-sdk/client-cloudwatch-logs";
import { readText } from "@flaplab/settings";
import { CALL_LOG_FILTER, DEFAULT_REGION, isStage, loadStageTopology, logGroupPrefix, planDeployment, STAGES } from "../src/index.js";
import { callLogsFromEvents, fillRunFolders, groupOfLogGroup, type GroupEvents, type LogEvent } from "../src/logs.js";
import { DEFAULT_REGION_SETTING } from "../src/settings.js";

const { values } = parseArgs({
  options: {
    stage: { type: "string" },
    out: { type: "string" },
    runs: { type: "string" },
    since: { type: "string", default: "7d" },
    until: { type: "string" },
    "max-events": { type: "string", default: "2000000" },
    "default-region": { type: "string", default: readText(process.env, DEFAULT_REGION_SETTING) ?? DEFAULT_REGION },
  },
});

function fail(message: string): never {
  process.stderr.write(`fetch-logs: ${message}\n`);
  process.exit(2);
}

/** An ISO time, or a span back from now ("90m", "6h", "2d"), as epoch ms. */
function parseTime(value: string, what: string): number {
  const span = /^(\d+)([mhd])$/.exec(value);
  if (span) return Date.now() - Number(span[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[span[2] as "m" | "h" | "d"];
  const t = Date.parse(value);
  if (Number.isNaN(t)) fail(`${what}: "${value}" is neither an ISO time nor a span like 6h`);
  return t;
}

if (values.stage === undefined || !isStage(values.stage)) fail(`--stage must be one of ${STAGES.join(", ")}`);
if (values.out === undefined) fail("--out <dir> is required");
const maxEvents = Number(values["max-events"]);
if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) fail(`--max-events must be a positive whole number, got ${values["max-events"]}`);
const stage = values.stage;
const startTime = parseTime(values.since, "--since");
const endTime = values.until === undefined ? Date.now() : parseTime(values.until, "--until");
if (endTime <= startTime) fail("--until is not after --since");
// pnpm runs package scripts in the package's folder; paths are the caller's.
const cwd = process.env["INIT_CWD"] ?? process.cwd();
const out = resolve(cwd, values.out);
const runsRoot = resolve(cwd, values.runs ?? values.out);

try {
  const topology = await loadStageTopology(stage);
  // Only the regions matter here; the domain is not part of any log group name.
  const plan = planDeployment(topology, { stage, domain: "logs.invalid", defaultRegion: values["default-region"], topologyName: stage });
  const prefix = logGroupPrefix(stage);
  const groups: GroupEvents[] = [];
  let total = 0;
  for (const region of plan.regions.map((r) => r.region)) {
    const client = new CloudWatchLogsClient({ region });
    for await (const page of paginateDescribeLogGroups({ client }, { logGroupNamePrefix: prefix })) {
      for (const lg of page.logGroups ?? []) {
        const group = lg.logGroupName === undefined ? undefined : groupOfLogGroup(lg.logGroupName, prefix);
        if (group === undefined || lg.logGroupName === undefined) continue;
        const events: LogEvent[] = [];
        for await (const p of paginateFilterLogEvents(
          { client, pageSize: 10_000 },
          { logGroupName: lg.logGroupName, filterPattern: CALL_LOG_FILTER, startTime, endTime },
        )) {
          for (const e of p.events ?? []) events.push({ ...(e.timestamp === undefined ? {} : { timestamp: e.timestamp }), ...(e.message === undefined ? {} : { message: e.message }) });
          if (total + events.length >= maxEvents) break;
        }
        total += events.length;
        process.stderr.write(`${region} ${lg.logGroupName}: ${events.length} events\n`);
        groups.push({ group, events });
        if (total >= maxEvents) {
          process.stderr.write(`fetch-logs: stopped at --max-events ${maxEvents}; narrow --since/--until for the rest\n`);
          break;
        }
      }
      if (total >= maxEvents) break;
    }
    client.destroy();
  }

  const logs = callLogsFromEvents(topology.name, groups);
  const logDir = join(out, "rpc-logs");
  await mkdir(logDir, { recursive: true });
  for (const [name, text] of Object.entries(logs.files)) await writeFile(join(logDir, name), text);
  process.stderr.write(`${logs.records} call records (${logs.skipped} other events) → ${logDir}\n`);
  const filled = await fillRunFolders(runsRoot, logs).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  });
  for (const f of filled) process.stderr.write(`${f.dir}: ${f.records} records of game ${f.gameId}\n`);
  process.stderr.write(`${filled.length} run folders filled; next: pnpm report ${values.runs ?? values.out}\n`);
} catch (err) {
  // No credentials, no permission, an unreachable endpoint: one line, not a stack trace.
  const e = err as Error & { name?: string };
  fail(`${e.name && e.name !== "Error" ? `${e.name}: ` : ""}${e.message}`);
}
