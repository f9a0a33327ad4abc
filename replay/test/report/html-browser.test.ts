import { pathToFileURL } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReportResult } from "../../src/report/index.js";
import { removeTempDirs } from "./fixtures.js";
import { sampleReport } from "./sample.js";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const STATS = ["samples", "min", "p10", "median", "mean", "p90", "p99", "p99.9", "max"];
const EXPECTED_HEADERS: Record<string, string[]> = {
  stats: STATS,
  runs: ["run", "status", "score", "expected", "ticks", "retries", "dispatch lateness p50 / max (ms)"],
  failures: ["run", "status", "stage", "reason"],
  comparison: ["deployment", "seed", "runs (ok / all)", "Frame inter-arrival", "Input → next frame", "Input → next audio", "Input → effect", "Auth", "Start game", "Median RPC"],
  problems: ["file", "reason"],
  penalties: ["deployment", "seed", "metric", "pairs", "penalty (ms)", "95 % interval (ms)", "includes 0"],
};

interface PageTable {
  kind: string;
  headers: string[];
  rows: string[][];
}

// Debian Chromium comes from `pnpm setup:test`.
describe("report.html in Chromium", () => {
  let browser: Browser;
  let result: ReportResult;

  beforeAll(async () => {
    result = await sampleReport();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await removeTempDirs();
  });

  it("opens offline with exact table headers and drawn SVG plots", async () => {
    const page = await browser.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    const url = pathToFileURL(result.files.html).href;
    await page.goto(url, { waitUntil: "load" });

    // Nothing but the file itself is fetched.
    expect(requests).toEqual([url]);
    expect(errors).toEqual([]);

    const tables = await page.$$eval("table", (els) =>
      els.map((t) => ({
        kind: t.className,
        headers: [...t.querySelectorAll("thead th")].map((th) => th.textContent ?? ""),
        rows: [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent ?? "")),
      })),
    );
    const byKind = (kind: string): PageTable[] => tables.filter((t: PageTable) => t.kind === kind);
    // 3 groups: a latency and an RPC table each; 1 comparison; 3 runs tables; 1 failures table.
    expect(byKind("stats")).toHaveLength(6);
    expect(byKind("comparison")).toHaveLength(1);
    expect(byKind("runs")).toHaveLength(3);
    expect(byKind("failures")).toHaveLength(1);
    // Microservices against the monolith, runs 1 and 2 paired (its run 3 failed); no CPU recorded, no CPU table.
    expect(byKind("penalties")).toHaveLength(1);
    expect(byKind("penalties")[0]!.rows.map((r) => `${r[0]} ${r[2]} ${r[3]}`)).toContain("microservices input-to-audio 2");
    expect(byKind("cpu")).toHaveLength(0);
    for (const t of tables) {
      expect(Object.keys(EXPECTED_HEADERS)).toContain(t.kind);
      if (t.kind === "stats") {
        expect(["metric", "rpc"]).toContain(t.headers[0]);
        expect(t.headers.slice(1)).toEqual(STATS);
      } else expect(t.headers).toEqual(EXPECTED_HEADERS[t.kind]);
      for (const row of t.rows) expect(row).toHaveLength(t.headers.length);
    }
    const latency = byKind("stats").filter((t) => t.headers[0] === "metric");
    for (const t of latency) {
      expect(t.rows.map((r) => r[0])).toEqual(["frame inter-arrival", "input-to-effect", "input-to-next-frame", "input-to-audio", "auth latency", "start-game latency"]);
    }
    const comparison = byKind("comparison")[0]!;
    expect(comparison.rows.map((r) => r[0])).toEqual(["monolith", "microservices", "flappygo:monolith_single_instance"]);
    expect(comparison.rows[2]![6]).toBe("n/a");
    expect(byKind("failures")[0]!.rows).toEqual([["run-003", "failed", "play", "browser crashed: target closed"]]);

    // Plots: Plot's chart SVGs, each with drawn marks and a real size on the page.
    const plots = await page.$$eval("div.chart svg", (svgs) =>
      svgs
        .filter((s) => s.getAttribute("class")?.startsWith("plot"))
        .map((s) => {
          const paths = [...s.querySelectorAll("path")].filter((p) => (p.getAttribute("d") ?? "").length > 20).length;
          const lines = s.querySelectorAll("line").length;
          const rects = [...s.querySelectorAll("rect")].filter((r) => Number(r.getAttribute("width")) > 0).length;
          const box = s.getBoundingClientRect();
          return { paths, lines, rects, width: box.width, height: box.height };
        }),
    );
    // 6 CDFs (one seed), 3 inter-arrival plots, 3 per-RPC bar charts.
    expect(plots).toHaveLength(12);
    for (const p of plots) {
      expect(p.paths + p.lines + p.rects).toBeGreaterThan(0);
      expect(p.width).toBeGreaterThan(100);
      expect(p.height).toBeGreaterThan(50);
    }
    // Every CDF and inter-arrival chart draws at least one long line path.
    expect(plots.filter((p) => p.paths > 0).length).toBeGreaterThanOrEqual(9);
    await page.close();
  }, 60_000);
});
