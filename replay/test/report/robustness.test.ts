import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runReportCli } from "../../src/report/index.js";
import { rttRows, removeTempDirs, tempDir, tickFrames, writeRun } from "./fixtures.js";

afterAll(removeTempDirs);

async function cli(argv: string[], cwd = process.cwd()): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runReportCli(argv, { cwd, out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("robustness", () => {
  it("writes the report when one of two runs has a broken summary.json, listing that run as unreadable", async () => {
    const root = await tempDir();
    const out = join(await tempDir(), "report");
    await writeRun(root, { deployment: "monolith", seed: "42", run: 1, rows: [...rttRows(), ...tickFrames(0, [33, 34, 32])] });
    const broken = await writeRun(root, { deployment: "monolith", seed: "42", run: 2, rows: tickFrames(0, [33]), summaryText: '{"format": "flaplab-run/1", "status": ' });
    const r = await cli([root, "--out", out]);
    expect(r.code).toBe(0);
    expect(r.err.join("\n")).toContain(`unreadable run ${broken}: summary.json:`);
    for (const f of ["report.html", "report.md", "metrics.csv", "metrics.json"]) expect(existsSync(join(out, f))).toBe(true);

    const json = JSON.parse(await readFile(join(out, "metrics.json"), "utf8")) as {
      groups: { deployment: string; seed: string; pooledRunCount: number; runs: { id: string; status: string; reason: string | null }[]; metrics: Record<string, { samples: number }> }[];
    };
    // The broken run is grouped by its path (<deployment>/<seed>/run-NNN).
    expect(json.groups).toHaveLength(1);
    const g = json.groups[0]!;
    expect([g.deployment, g.seed, g.pooledRunCount]).toEqual(["monolith", "42", 1]);
    expect(g.runs.map((x) => [x.id, x.status])).toEqual([
      ["run-001", "ok"],
      ["run-002", "unreadable"],
    ]);
    expect(g.runs[1]!.reason).toMatch(/^summary\.json: /);
    expect(g.metrics["frame_inter_arrival"]!.samples).toBe(3);

    const html = await readFile(join(out, "report.html"), "utf8");
    expect(html).toContain("Unreadable runs and files");
    expect(html).toContain(broken);
    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).toMatch(/\| run-002 \| unreadable \| – \| summary\.json: /);
  });

  it("lists an ok run with a malformed latency.csv as unreadable, naming the line", async () => {
    const root = await tempDir();
    const out = await tempDir();
    await writeRun(root, { deployment: "monolith", seed: "42", run: 1, rows: tickFrames(0, [33]) });
    const dir = await writeRun(root, { deployment: "monolith", seed: "42", run: 2, rows: tickFrames(0, [33]) });
    await writeFile(join(dir, "latency.csv"), "type,direction,time\nframe,recv,1.0\nframe,recv\n");
    const r = await cli([root, "--out", out]);
    expect(r.code).toBe(0);
    const md = await readFile(join(out, "report.md"), "utf8");
    expect(md).toContain("| run-002 | unreadable | – | latency.csv line 3: 2 cells, the header has 3 |");
  });

  it("ignores half-written <run>.partial folders", async () => {
    const root = await tempDir();
    const out = await tempDir();
    await writeRun(root, { deployment: "monolith", seed: "42", run: 1, rows: tickFrames(0, [33]) });
    const dir = await writeRun(root, { deployment: "monolith", seed: "42", run: 2, rows: tickFrames(0, [33]) });
    const { rename } = await import("node:fs/promises");
    await rename(dir, `${dir}.partial`);
    const r = await cli([root, "--out", out]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toContain("1 run(s): 1 ok");
  });

  it("exits 2 with a clear message for a missing folder", async () => {
    const out = await tempDir();
    const missing = join(await tempDir(), "no-such-runs");
    const r = await cli([missing, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toBe(`report: no such folder: ${missing}`);
    expect(existsSync(join(out, "report.html"))).toBe(false);
  });

  it("exits 2 when no runs are found", async () => {
    const root = await tempDir();
    await mkdir(join(root, "empty", "deeper"), { recursive: true });
    const out = await tempDir();
    const r = await cli([root, "--out", out]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/^report: no runs found in /);
    expect(existsSync(join(out, "report.html"))).toBe(false);
  });

  it("exits 2 without --out or with an unknown option", async () => {
    const root = await tempDir();
    expect((await cli([root])).err[0]).toBe("report: --out <dir> is required");
    expect((await cli([root])).code).toBe(2);
    expect((await cli([root, "--out", root, "--bogus"])).code).toBe(2);
  });

  it("resolves relative folders against the given working directory", async () => {
    const base = await tempDir();
    await writeRun(join(base, "runs"), { deployment: "monolith", seed: "42", run: 1, rows: tickFrames(0, [33]) });
    const r = await cli(["runs", "--out=out/r"], base);
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe("report: 1 deployment × seed group(s), 1 run(s): 1 ok, 0 failed, 0 unreadable");
    expect(existsSync(join(base, "out", "r", "report.html"))).toBe(true);
    expect(relative(base, r.out[1]!)).toBe(join("out", "r", "report.html"));
  });
});
