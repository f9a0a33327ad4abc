import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseStudyArgs, runStudy } from "../../src/study/study.js";
import { REPO, topologyOnFreePorts } from "./free-topology.js";

// `pnpm study` in small: two deployments (one with emulated multi-region latency), one run each
// over each stream link.
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe("the one-command study", () => {
  it("runs each deployment, replays the trace and writes one report with them side by side", async () => {
    const mono = await topologyOnFreePorts("monolith");
    const multi = await topologyOnFreePorts("multiregion");
    dirs.push(mono.dir, multi.dir);
    const out = join(mono.dir, "study");
    const opts = parseStudyArgs(
      [
        "--runs", "1", "--out", out, "--deployments", `${mono.file},${multi.file}`, "--trace", "replay/traces/6977347407732442987.csv",
        "--links", "webtransport,websocket",
      ],
      REPO,
      REPO,
    );
    const lines: string[] = [];
    const result = await runStudy(opts, (l) => lines.push(l));
    expect(result, lines.join("\n")).toMatchObject({ ok: 4, failed: 0 });
    expect(lines.some((l) => /engine->music +cross-region +RTT +27 ms/.test(l))).toBe(true);

    const md = await readFile(join(out, "report", "report.md"), "utf8");
    const comparison = md.slice(md.indexOf("## Comparison"), md.indexOf("\n## ", md.indexOf("## Comparison") + 5));
    expect(comparison).toMatch(/\| monolith \| 6977347407732442987 \| 1 \/ 1 \|/);
    expect(comparison).toMatch(/\| multiregion \| 6977347407732442987 \| 1 \/ 1 \|/);
    expect(comparison).toMatch(/\| monolith\+websocket \| 6977347407732442987 \| 1 \/ 1 \|/);
    expect(comparison).toMatch(/\| multiregion\+websocket \| 6977347407732442987 \| 1 \/ 1 \|/);
    // Input → next audio crosses browser→engine, engine→music and music→browser: far more in multiregion.
    const audioMedian = (name: string) => Number(new RegExp(`\\| ${name} \\|[^\\n]*`).exec(comparison)![0].split("|")[6]!.split("/")[0]!.trim());
    expect(audioMedian("multiregion")).toBeGreaterThan(audioMedian("monolith") + 60);
    // The WebSocket link crosses the same emulated links.
    expect(audioMedian("multiregion\\+websocket")).toBeGreaterThan(audioMedian("monolith\\+websocket") + 60);
    await readFile(join(out, "report", "report.html"));
  }, 300_000);

  it("takes --tls for calls between regions over https:// (off by default)", () => {
    expect(parseStudyArgs([], REPO, REPO).tls).toBe(false);
    expect(parseStudyArgs(["--tls", "--deployments", "multiregion"], REPO, REPO)).toMatchObject({ tls: true, deployments: ["multiregion"] });
  });
});
