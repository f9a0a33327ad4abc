import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { callLogToFlappyGoCsv, createCallLogger, pinoCallLog, type CallRecord } from "../src/index.js";

const record: CallRecord = {
  src: "initiator", srcVerb: "StartGame", dst: "worldgen", dstVerb: "GenerateWorld", gameId: "g-1",
  mode: "networked", protocol: "connect+proto", httpVersion: "1.1", durationNs: 1_234_567, code: "ok",
  srcGroup: "initiator", dstGroup: "worldgen", srcRegion: "local", dstRegion: "local", srcZone: "a", dstZone: "a",
  side: "client",
};

async function logLines(records: CallRecord[]): Promise<string> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on("data", (c: Buffer) => chunks.push(c));
  const log = pinoCallLog(createCallLogger(sink));
  for (const r of records) log(r);
  await new Promise((r) => setImmediate(r));
  return Buffer.concat(chunks).toString();
}

describe("call log", () => {
  it("writes one NDJSON line per call with every documented column", async () => {
    const text = await logLines([record, { ...record, dst: "engine", dstVerb: "StartGame" }]);
    const lines = text.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ ...record, msg: "rpc" });
    expect(typeof lines[0]!["time"]).toBe("number");
    expect(lines[0]).not.toHaveProperty("pid");
  });

  it("converts to FlappyGo's stats.csv, keeping only caller-side rpc records", async () => {
    const text = await logLines([record, { ...record, side: "server", src: "external" }]);
    const { csv, rows, skipped } = callLogToFlappyGoCsv(`${text}{"msg":"server listening"}\n`);
    expect(csv.split("\n")[0]).toBe("SrcSvcName,SrcSvcVerb,DestSvcName,DestSvcVerb,GameId,ReqTime");
    expect(csv.split("\n")[1]).toBe("initiator,StartGame,worldgen,GenerateWorld,g-1,1234567");
    expect(rows).toBe(1);
    expect(skipped).toBe(2);
  });

  it("reports a line that is not JSON by its number", () => {
    expect(() => callLogToFlappyGoCsv('{"msg":"rpc"}\n{oops')).toThrow(/line 2 is not JSON/);
  });

  it("has a command that converts a log from stdin", async () => {
    const text = await logLines([record]);
    const bin = resolve(import.meta.dirname, "../bin/rpc-csv.ts");
    const child = execFile(process.execPath, ["--import", "tsx", bin]);
    const out = promisify((cb: (e: Error | null, v: string) => void) => {
      let stdout = "";
      child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
      child.on("close", (code) => (code === 0 ? cb(null, stdout) : cb(new Error(`exit ${code}`), stdout)));
    });
    child.stdin!.end(text);
    expect(await out()).toContain("initiator,StartGame,worldgen,GenerateWorld,g-1,1234567");
  });
});

describe("call log lines", () => {
  it("are the lines pino itself writes for the same record, escapes included", async () => {
    const odd: CallRecord = { ...record, gameId: 'quote " backslash \\ newline \n unicode é', durationNs: 42 };
    for (const r of [record, odd]) {
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on("data", (c: Buffer) => chunks.push(c));
      const logger = createCallLogger(sink);
      pinoCallLog(logger)(r);
      logger.info(r, "rpc");
      await new Promise((resolve) => setImmediate(resolve));
      const [ours, pinos] = Buffer.concat(chunks).toString().trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(Object.keys(ours!)).toEqual(Object.keys(pinos!));
      expect({ ...ours, time: 0 }).toEqual({ ...pinos, time: 0 });
    }
  });
});
