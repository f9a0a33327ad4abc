// `fetch-logs` end to end against a stand-in CloudWatch Logs endpoint on loopback (the AWS SDK's
// own client, pointed there with AWS_ENDPOINT_URL_CLOUDWATCH_LOGS): the regions it asks, the log
// groups and filter it asks for, paging, and the files it writes.
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALL_LOG_FILTER, planDeployment, stageTopology } from "../src/index.js";
import { loadTopology } from "@flaplab/runtime";

const INFRA = resolve(import.meta.dirname, "..");

interface Page {
  readonly logGroupName: string;
  readonly events: { timestamp: number; message: string }[];
}
/** Where each fixture group runs in the multiregion plan. */
let regionOf: Record<string, string> = {};
let pages: Page[] = [];
const requests: { region: string; target: string; body: Record<string, unknown> }[] = [];
let server: Server;
let endpoint: string;
let out: string;

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return JSON.parse(text) as Record<string, unknown>;
}

beforeAll(async () => {
  const plan = planDeployment(await loadTopology(stageTopology("multiregion")), { stage: "multiregion", domain: "example.org" });
  regionOf = Object.fromEntries(plan.services.map((s) => [s.group, s.region]));
  pages = (JSON.parse(await readFile(resolve(import.meta.dirname, "fixtures/cloudwatch-events.json"), "utf8")) as { pages: Page[] }).pages;
  server = createServer((req, res) => {
    void (async () => {
      const target = String(req.headers["x-amz-target"] ?? "");
      // SigV4's credential scope names the region the client was made for.
      const region = /Credential=[^/]+\/\d+\/([a-z0-9-]+)\/logs\//.exec(String(req.headers["authorization"] ?? ""))?.[1] ?? "?";
      const b = await body(req);
      requests.push({ region, target, body: b });
      const inRegion = pages.filter((p) => regionOf[p.logGroupName.split("/")[3]!] === region);
      let answer: unknown;
      if (target === "Logs_20140328.DescribeLogGroups") {
        answer = { logGroups: inRegion.filter((p) => p.logGroupName.startsWith(String(b["logGroupNamePrefix"]))).map((p) => ({ logGroupName: p.logGroupName })) };
      } else if (target === "Logs_20140328.FilterLogEvents") {
        const page = inRegion.find((p) => p.logGroupName === b["logGroupName"]);
        const events = (page?.events ?? []).filter((e) => e.timestamp >= Number(b["startTime"]) && e.timestamp <= Number(b["endTime"]));
        // Two events a page, so the client has to follow nextToken.
        const from = b["nextToken"] === undefined ? 0 : Number(b["nextToken"]);
        answer = { events: events.slice(from, from + 2), ...(from + 2 < events.length ? { nextToken: String(from + 2) } : {}) };
      } else {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.1" }).end(JSON.stringify({ __type: "UnknownOperationException" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" }).end(JSON.stringify(answer));
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  out = await mkdtemp(join(tmpdir(), "flaplab-fetch-logs-cli-"));
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await rm(out, { recursive: true, force: true });
});

function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bin/fetch-logs.ts", ...args], {
      cwd: INFRA,
      env: {
        PATH: process.env["PATH"] ?? "",
        INIT_CWD: out,
        AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
        AWS_SECRET_ACCESS_KEY: "secret",
        AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: endpoint,
        AWS_EC2_METADATA_DISABLED: "true",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolveRun({ code, stderr });
    });
  });
}

// Each test runs the CLI in a child process (tsx, then the AWS SDK loading): seconds on a loaded machine.
describe("fetch-logs", { timeout: 60_000 }, () => {
  it("downloads every region's call records of the stage and writes the servers' call-log files", async () => {
    const { code, stderr } = await runCli(["--stage", "multiregion", "--out", "cloud-run", "--since", "2026-11-25T00:00:00Z", "--until", "2026-11-26T00:00:00Z"]);
    expect(code, stderr).toBe(0);
    const regions = [...new Set(Object.values(regionOf))].sort();
    const described = requests.filter((r) => r.target === "Logs_20140328.DescribeLogGroups");
    expect([...new Set(described.map((r) => r.region))].sort()).toEqual(regions);
    for (const r of described) expect(r.body["logGroupNamePrefix"]).toBe("/flaplab/multiregion/");
    const filtered = requests.filter((r) => r.target === "Logs_20140328.FilterLogEvents");
    for (const r of filtered) {
      expect(r.body["filterPattern"]).toBe(CALL_LOG_FILTER);
      expect(r.body["startTime"]).toBe(Date.parse("2026-11-25T00:00:00Z"));
      expect(r.body["endTime"]).toBe(Date.parse("2026-11-26T00:00:00Z"));
    }
    // Engine's 6 events take three pages.
    expect(filtered.filter((r) => String(r.body["logGroupName"]).includes("/engine/"))).toHaveLength(3);

    const dir = join(out, "cloud-run", "rpc-logs");
    expect((await readdir(dir)).sort()).toEqual(["rpc-multiregion-engine.ndjson", "rpc-multiregion-initiator.ndjson", "rpc-multiregion-score.ndjson"]);
    const engine = (await readFile(join(dir, "rpc-multiregion-engine.ndjson"), "utf8")).trimEnd().split("\n");
    expect(engine.map((l) => (JSON.parse(l) as { dstVerb: string }).dstVerb)).toEqual(["PlayMusic", "RecordRun", "PlayMusic"]);
    expect(stderr).toContain("6 call records");
  });

  it("asks only for the window given and says so when it is empty", async () => {
    requests.length = 0;
    const { code, stderr } = await runCli(["--stage", "multiregion", "--out", "empty", "--since", "2020-01-01T00:00:00Z", "--until", "2020-01-02T00:00:00Z"]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain("0 call records");
  });

  it("refuses bad arguments with one line", async () => {
    const bad = await runCli(["--stage", "multiregion", "--out", "x", "--since", "yesterday"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n").filter((l) => l.startsWith("fetch-logs:"))).toEqual([
      'fetch-logs: --since: "yesterday" is neither an ISO time nor a span like 6h',
    ]);
  });
});
