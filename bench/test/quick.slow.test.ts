import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const BENCH = resolve(import.meta.dirname, "..");
const SECTIONS = ["calls", "idle", "load", "engine", "frames", "browser", "overload", "ticks"];
let out: string | undefined;

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

describe("bench --quick", () => {
  it("runs every section end to end and writes latest.json and latest.md", async () => {
    out = await mkdtemp(join(tmpdir(), "flaplab-bench-test-"));
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "--quick", "--out", out], { cwd: BENCH, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.on("exit", r));
    expect(code, stderr.slice(-3000)).toBe(0);

    expect(stdout.split("\n")[0]).toMatch(/^Machine: \d+ cores, .+, Node v\d+/);
    const json = JSON.parse(await readFile(join(out, "latest.json"), "utf8")) as {
      format: string;
      quick: boolean;
      machine: { cores: number; cpuModel: string; node: string };
      sections: Record<string, { table: { headers: string[]; rows: string[][] }; data: unknown }>;
      failures: unknown[];
    };
    expect(json).toMatchObject({ format: "flaplab-bench/1", quick: true, failures: [] });
    expect(json.machine.cores).toBeGreaterThan(0);
    expect(Object.keys(json.sections)).toEqual(SECTIONS);
    for (const id of SECTIONS) {
      const s = json.sections[id]!;
      expect(s.table.rows.length, id).toBeGreaterThan(0);
      for (const row of s.table.rows) expect(row.length, id).toBeLessThanOrEqual(s.table.headers.length);
      expect(s.data, id).toBeTruthy();
    }
    // Every speed comes with its sample count.
    expect(json.sections["calls"]!.table.headers).toEqual(expect.arrayContaining(["Samples", "p50 ÷ bare"]));
    const md = await readFile(join(out, "latest.md"), "utf8");
    // Every client link variant of section 3b was measured, the precise-clock one included.
    for (const variant of ["webtransport", "websocket", "websocket, \\d+ shards", "websocket, precise clock", "websocket, Go clients", "loopback floor \\(plain TCP, no engine\\)"]) {
      expect(md).toMatch(new RegExp(`\\| stream server → clients, ${variant} `));
    }
    // The Go clients played their games over both links they speak (WebSocket to the engine, plain
    // TCP to the loopback floor): frames read, at the server's pace, with their own CPU.
    const engineRows = (json.sections["engine"]!.data as { rows: { variant?: string; games: number; ticks: number; client?: { frames: number; cpuUs: number; interArrivalStats: { samples: number } } }[] }).rows;
    const goRows = engineRows.filter((r) => r.variant === "websocket, Go clients" || r.variant === "loopback floor (plain TCP, no engine)");
    expect(new Set(goRows.map((r) => r.variant)).size).toBe(2);
    expect(goRows.length).toBeGreaterThan(0);
    for (const r of goRows) {
      expect(r.client!.frames, JSON.stringify(r)).toBeGreaterThan(0);
      expect(r.client!.frames).toBeLessThanOrEqual(r.ticks + 2 * r.games);
      expect(r.client!.interArrivalStats.samples).toBeGreaterThan(0);
      expect(r.client!.cpuUs).toBeGreaterThan(0);
    }
    for (const title of ["1. Call modes", "2. Open-loop load", "3. Engine capacity", "4. Frame bytes", "5. Input latency", "6. Overload"]) {
      expect(md).toContain(`## ${title}`);
      expect(stdout).toContain(`## ${title}`);
    }
  }, 240_000);
});
