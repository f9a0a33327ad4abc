// The CloudWatch → call-log converter of `fetch-logs`, offline: FilterLogEvents pages in the API's
// shape (test/fixtures/cloudwatch-events.json) become the servers' call-log files and fill replay
// run folders that the report then reads.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CALL_LOG_FILTER, logGroupPrefix } from "../src/index.js";
import { callLogsFromEvents, fillRunFolders, groupOfLogGroup, type GroupEvents } from "../src/logs.js";

// The replay report's own loader and fixture writer (loaded by path: another package's sources).
const REPORT_LOAD = "../../replay/src/report/load.js";
const REPORT_FIXTURES = "../../replay/test/report/fixtures.js";
interface ReportRun {
  readonly gameId: string | null;
  readonly status: string;
  readonly rpc: readonly { src: string; dst: string; verb: string; ms: number }[];
}
type DiscoverRuns = (root: string) => Promise<{ runs: ReportRun[]; problems: unknown[] }>;
type WriteRun = (root: string, spec: Record<string, unknown>) => Promise<string>;
type TickFrames = (start: number, gaps: readonly number[]) => unknown[];

interface Page {
  readonly logGroupName: string;
  readonly events: { timestamp: number; message: string }[];
}

async function recorded(): Promise<GroupEvents[]> {
  const fixture = JSON.parse(await readFile(resolve(import.meta.dirname, "fixtures/cloudwatch-events.json"), "utf8")) as { pages: Page[] };
  return fixture.pages.map((p) => ({ group: groupOfLogGroup(p.logGroupName, logGroupPrefix("multiregion"))!, events: p.events }));
}

let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

describe("fetch-logs' converter", () => {
  it("selects the call records with a filter on the field the call log writes", () => {
    expect(CALL_LOG_FILTER).toBe('{ $.msg = "rpc" }');
  });

  it("names groups from log group names, and nothing from another stage", () => {
    const prefix = logGroupPrefix("multiregion");
    expect(groupOfLogGroup("/flaplab/multiregion/engine/20261124101500123400000001", prefix)).toBe("engine");
    expect(groupOfLogGroup("/flaplab/multiregion-2/engine/x", prefix)).toBeUndefined();
    expect(groupOfLogGroup("/sst/cluster/x/engine", prefix)).toBeUndefined();
    expect(groupOfLogGroup("/flaplab/multiregion/", prefix)).toBeUndefined();
  });

  it("rebuilds each group's call log: records only, once each, in time order, lines as the server wrote them", async () => {
    const groups = await recorded();
    const logs = callLogsFromEvents("multiregion", groups);
    expect(Object.keys(logs.files).sort()).toEqual(["rpc-multiregion-engine.ndjson", "rpc-multiregion-initiator.ndjson", "rpc-multiregion-score.ndjson"]);
    // 3 engine records (one returned twice), 2 initiator, 1 score; 2 server log lines, a cut line and a stray one skipped.
    expect(logs.records).toBe(6);
    expect(logs.skipped).toBe(4);
    const engine = logs.files["rpc-multiregion-engine.ndjson"]!.trimEnd().split("\n");
    expect(engine).toHaveLength(3);
    const parsed = engine.map((l) => JSON.parse(l) as { time: number; dst: string; dstVerb: string; durationNs: number });
    expect(parsed.map((r) => `${r.dst}.${r.dstVerb}`)).toEqual(["music.PlayMusic", "score.RecordRun", "music.PlayMusic"]);
    expect(parsed.map((r) => r.time)).toEqual([...parsed.map((r) => r.time)].sort((a, b) => a - b));
    const originals = groups[0]!.events.map((e) => e.message);
    for (const line of engine) expect(originals).toContain(line);
  });

  it("fills replay run folders that the report then reads", async () => {
    const root = await mkdtemp(join(tmpdir(), "flaplab-fetch-logs-"));
    dirs.push(root);
    const { writeRun, tickFrames } = (await import(REPORT_FIXTURES)) as { writeRun: WriteRun; tickFrames: TickFrames };
    const { discoverRuns } = (await import(REPORT_LOAD)) as { discoverRuns: DiscoverRuns };
    // Two runs as the runner writes them without --rpc-logs (empty rpc.ndjson).
    const g1 = await writeRun(root, { deployment: "aws-multiregion", seed: "6977347407732442987", run: 1, rows: tickFrames(1000, [16.7, 16.7]) });
    const g2 = await writeRun(root, { deployment: "aws-multiregion", seed: "6977347407732442987", run: 2, rows: tickFrames(1000, [16.7, 16.7]) });
    const { gameId: id1 } = JSON.parse(await readFile(join(g1, "summary.json"), "utf8")) as { gameId: string };
    const { gameId: id2 } = JSON.parse(await readFile(join(g2, "summary.json"), "utf8")) as { gameId: string };

    // The recorded events, with the fixture's game ids replaced by the runs' (the first game is run 1's).
    const text = await readFile(resolve(import.meta.dirname, "fixtures/cloudwatch-events.json"), "utf8");
    const pages = (JSON.parse(text) as { pages: Page[] }).pages;
    const fixtureGames = [...new Set(pages.flatMap((p) => p.events.map((e) => /"gameId":"([^"]+)"/.exec(e.message)?.[1] ?? "")))].filter((g) => g !== "");
    expect(fixtureGames).toHaveLength(2);
    const swap = (m: string) => m.replaceAll(fixtureGames[0]!, id1).replaceAll(fixtureGames[1]!, id2);
    const groups = pages.map((p) => ({
      group: groupOfLogGroup(p.logGroupName, logGroupPrefix("multiregion"))!,
      events: p.events.map((e) => ({ ...e, message: swap(e.message) })),
    }));

    const filled = await fillRunFolders(root, callLogsFromEvents("multiregion", groups));
    expect(filled.map((f) => [f.gameId, f.records])).toEqual([
      [id1, 4],
      [id2, 1],
    ]);
    const summary = JSON.parse(await readFile(join(g1, "summary.json"), "utf8")) as { rpcRecords: number; gameId: string };
    expect(summary).toMatchObject({ rpcRecords: 4, gameId: id1 });

    const { runs, problems } = await discoverRuns(root);
    expect(problems).toEqual([]);
    const run1 = runs.find((r) => r.gameId === id1)!;
    expect(run1.status).toBe("ok");
    expect(run1.rpc.map((r) => `${r.src}->${r.dst}:${r.verb}`).sort()).toEqual(
      ["engine->music:PlayMusic", "engine->score:RecordRun", "initiator->engine:StartGame", "initiator->worldgen:GenerateWorld"].sort(),
    );
    expect(run1.rpc.find((r) => r.verb === "RecordRun")!.ms).toBeCloseTo(181, 6);
    expect(runs.find((r) => r.gameId === id2)!.rpc.map((r) => r.verb)).toEqual(["PlayMusic"]);
  });

  it("leaves a run alone when the logs hold nothing of its game", async () => {
    const root = await mkdtemp(join(tmpdir(), "flaplab-fetch-logs-"));
    dirs.push(root);
    const { writeRun, tickFrames } = (await import(REPORT_FIXTURES)) as { writeRun: WriteRun; tickFrames: TickFrames };
    const dir = await writeRun(root, {
      deployment: "aws-multiregion",
      seed: "1",
      run: 1,
      rows: tickFrames(1000, [16.7]),
      rpc: [{ src: "engine", dst: "score", dstVerb: "RecordRun", durationNs: 5e6 }],
    });
    const before = await readFile(join(dir, "rpc.ndjson"), "utf8");
    const filled = await fillRunFolders(root, callLogsFromEvents("multiregion", await recorded()));
    expect(filled.map((f) => f.records)).toEqual([0]);
    expect(await readFile(join(dir, "rpc.ndjson"), "utf8")).toBe(before);
  });
});
