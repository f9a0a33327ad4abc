import * as Plot from "@observablehq/plot";
import { parseHTML } from "linkedom";
import type { Group } from "./aggregate.js";
import type { LatencyHistogram } from "@flaplab/report-kit/latency";

/** Plot renders into this server-side DOM; each chart is serialised to inline SVG markup. */
function plotDocument(): Document {
  const { document } = parseHTML("<!doctype html><html><head></head><body></body></html>");
  return document as unknown as Document;
}

function render(options: Plot.PlotOptions): string {
  const node = Plot.plot({ ...options, document: plotDocument() });
  return node.outerHTML;
}

const STYLE = { fontSize: "11px", background: "white", color: "#222", overflow: "visible" } as const;

/** Frame inter-arrival (ms) against time since the run's first frame (s), one line per run. */
export function interArrivalPlot(group: Group): string | null {
  const data: { run: string; t: number; ms: number }[] = [];
  for (const run of group.pooled) {
    const times = run.frameTimes;
    for (let i = 1; i < times.length; i++) {
      data.push({ run: run.id, t: (times[i]! - times[0]!) / 1000, ms: Math.round((times[i]! - times[i - 1]!) * 1000) / 1000 });
    }
  }
  if (data.length === 0) return null;
  return render({
    width: 760,
    height: 260,
    marginLeft: 50,
    style: STYLE,
    x: { label: "time since first frame (s)" },
    y: { label: "frame inter-arrival (ms)", grid: true },
    color: { legend: true },
    marks: [Plot.lineY(data, { x: "t", y: "ms", stroke: "run", strokeWidth: 1 })],
  });
}

/** A CDF of one metric with one line per deployment (from each pooled histogram). */
export function cdfPlot(metricLabel: string, series: readonly { deployment: string; histogram: LatencyHistogram }[]): string | null {
  const data = series.flatMap(({ deployment, histogram }) => histogram.cdfPoints().map((p) => ({ deployment, ms: p.ms, share: p.share })));
  if (data.length === 0) return null;
  return render({
    title: metricLabel,
    width: 380,
    height: 240,
    marginLeft: 45,
    style: STYLE,
    x: { label: `${metricLabel} (ms)`, grid: true },
    y: { label: "share of samples", domain: [0, 1], grid: true },
    color: { legend: true },
    marks: [Plot.line(data, { x: "ms", y: "share", stroke: "deployment", z: "deployment", curve: "step-after" }), Plot.ruleY([0])],
  });
}

/** Per-RPC median latency as bars, with a whisker from the median to p99. */
export function rpcPlot(group: Group): string | null {
  const data = group.rpc
    .filter((r) => r.stats.median !== null)
    .map((r) => ({ rpc: r.label, median: r.stats.median!, p99: r.stats.p99! }));
  if (data.length === 0) return null;
  const longest = Math.max(...data.map((d) => d.rpc.length));
  return render({
    width: 760,
    height: 40 + data.length * 26,
    marginLeft: Math.min(320, 12 + longest * 6.5),
    style: STYLE,
    x: { label: "ms (bar: median, whisker: p99)", grid: true },
    y: { label: null, domain: data.map((d) => d.rpc) },
    marks: [
      Plot.barX(data, { y: "rpc", x: "median", fill: "#4e79a7" }),
      Plot.ruleY(data, { y: "rpc", x1: "median", x2: "p99", stroke: "#222" }),
      Plot.tickX(data, { y: "rpc", x: "p99", stroke: "#222" }),
      Plot.ruleX([0]),
    ],
  });
}

/** A load level's figure for one deployment, as the Load plots draw it. */
export interface LoadPoint {
  readonly deployment: string;
  readonly level: number;
  readonly ms: number;
  /** The 95 % interval, where there is one. */
  readonly low?: number | null;
  readonly high?: number | null;
}

/** A figure (ms) against load (bot players), one line per deployment, with interval whiskers where given. */
/** What both Load plots share: every deployment (one colour each) and every level measured (the x axis). */
export interface LoadAxes {
  readonly deployments: readonly string[];
  readonly levels: readonly number[];
}

function loadPlot(title: string, yLabel: string, points: readonly LoadPoint[], axes: LoadAxes, zero: boolean): string | null {
  if (points.length === 0) return null;
  const whiskers = points.filter((p) => p.low != null && p.high != null);
  return render({
    title,
    width: 380,
    height: 260,
    marginLeft: 50,
    style: STYLE,
    // Every level on the axis, and the same colour for a deployment in both plots, whether or not it has a point there.
    x: { label: "load (bot players)", grid: true, domain: [Math.min(...axes.levels), Math.max(...axes.levels)], ticks: [...axes.levels] },
    y: { label: yLabel, grid: true, ...(zero ? { zero: true } : {}) },
    color: { legend: true, domain: [...axes.deployments] },
    marks: [
      ...(zero ? [Plot.ruleY([0], { stroke: "#888" })] : []),
      Plot.ruleX(whiskers, { x: "level", y1: "low", y2: "high", stroke: "deployment", strokeOpacity: 0.6 }),
      Plot.line(points, { x: "level", y: "ms", stroke: "deployment", z: "deployment", marker: "circle" }),
    ],
  });
}

/** The paired penalty on input → audio against load, one line per deployment (whiskers: the 95 % interval). */
export function loadPenaltyPlot(points: readonly LoadPoint[], axes: LoadAxes): string | null {
  return loadPlot("penalty on input → audio against load", "penalty against the monolith (ms)", points, axes, true);
}

/** The median input → audio against load, one line per deployment. */
export function loadAudioPlot(points: readonly LoadPoint[], axes: LoadAxes): string | null {
  return loadPlot("input → audio median against load", "input → audio p50 (ms)", points, axes, false);
}
