import type { GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import type { EngineSummaryView, GameReport } from "./automation.js";
import type { GameResult } from "./game-run.js";
import { type LatencyRow, rowsToCsv } from "./latency-log.js";
import type { PageElements } from "./page.js";

// The game-over screen: the score, whether the run was recorded, the game's measurements, and its
// latency log and trace to download.

/** The engine's GameSummary as the page shows and automation reads it (JSON-safe numbers). */
export function engineSummaryView(s: GameSummary): EngineSummaryView {
  return {
    score: s.score,
    ticks: s.ticks,
    recorded: s.recorded,
    recordError: s.recordError,
    recordPending: s.recordPending,
    framesSent: s.framesSent,
    frameBytes: Number(s.frameBytes),
    framesUnder1kb: s.framesUnder1kb,
    acksSent: s.acksSent,
    ackBytes: Number(s.ackBytes),
    tickLatenessP50Us: s.tickLatenessP50Us,
    tickLatenessMaxUs: s.tickLatenessMaxUs,
    ticksSkipped: s.ticksSkipped,
  };
}

export class GameOverScreen {
  /** The download links' object URLs, revoked when the next game's replace them. */
  private objectUrls: string[] = [];

  constructor(private readonly el: PageElements) {}

  /** Fills the screen with a finished game: its result, its report and its latency log. */
  show(result: GameResult, report: GameReport, rows: readonly LatencyRow[]): void {
    this.el.finalScore.textContent = String(result.score);
    this.el.recordStatus.textContent = recordStatus(result, report);
    this.el.summary.replaceChildren(
      ...summaryRows(report).flatMap(([k, v]) => {
        const dt = document.createElement("dt");
        dt.textContent = k;
        const dd = document.createElement("dd");
        dd.textContent = v;
        return [dt, dd];
      }),
    );
    for (const url of this.objectUrls) URL.revokeObjectURL(url);
    const csvUrl = URL.createObjectURL(new Blob([rowsToCsv(rows)], { type: "text/csv" }));
    const traceUrl = URL.createObjectURL(new Blob([result.trace], { type: "application/json" }));
    this.objectUrls = [csvUrl, traceUrl];
    this.el.downloadCsv.href = csvUrl;
    this.el.downloadCsv.download = "latency_data.csv"; // FlappyGo's file name
    this.el.saveTrace.href = traceUrl;
    this.el.saveTrace.download = `${result.seed.toString()}.json`;
  }
}

function recordStatus(result: GameResult, report: GameReport): string {
  const e = report.engine;
  return e
    ? e.recorded
      ? "Run recorded."
      : e.recordPending
        ? "Run saved, will be recorded (the scoreboard is unreachable right now)."
        : `Run not recorded: ${e.recordError || "unknown reason"}`
    : result.error
      ? `Game ended early: ${result.error}`
      : "No summary from the engine.";
}

/** The game's measurements as label and value, the engine's own when it sent its summary. */
function summaryRows(report: GameReport): [string, string][] {
  const e = report.engine;
  const ms = (v: number | null) => (v === null ? "–" : `${v.toFixed(1)} ms`);
  const rows: [string, string][] = [
    ["Frames received", `${report.framesReceived}${e ? ` (engine sent ${e.framesSent})` : ""}`],
    ["Bytes per frame (mean)", report.frameBytesMean === null ? "–" : `${report.frameBytesMean.toFixed(1)} B`],
    ["Frames < 1 KB", report.framesUnder1kbShare === null ? "–" : `${(report.framesUnder1kbShare * 100).toFixed(1)} %`],
    ["Input acks received", `${report.acksReceived}${e ? ` (engine sent ${e.acksSent})` : ""}`],
    ["Input → effect (median)", `${ms(report.inputToEffectMedianMs)} (${report.inputToEffectCount} inputs)`],
    ["Input → next frame (median)", `${ms(report.inputToNextFrameMedianMs)} (${report.inputToNextFrameCount} inputs)`],
    ["Input → audio (median)", `${ms(report.inputToAudioMedianMs)} (${report.inputToAudioCount} clips)`],
    ["Auth latency", ms(report.authMs)],
    ["Start latency", ms(report.startMs)],
  ];
  if (e) {
    rows.push(
      ["Ticks", String(e.ticks)],
      ["Tick lateness p50 / max", `${e.tickLatenessP50Us} / ${e.tickLatenessMaxUs} µs`],
      ["Ticks skipped", String(e.ticksSkipped)],
      ["Engine frame bytes", String(e.frameBytes)],
    );
  }
  return rows;
}
