// A worker's figures: one latency histogram per metric, the per-second counters of its progress
// line, and every game's record.
import { LatencyHist } from "./hist.js";
import { type GameRecord, METRICS, type MetricName } from "./protocol.js";

export class WorkerMetrics {
  readonly hists = Object.fromEntries(METRICS.map((m) => [m, new LatencyHist()])) as Record<MetricName, LatencyHist>;
  /** Bot lateness of the current second (reset by each progress message). */
  readonly secondLateness = new LatencyHist();
  readonly games: GameRecord[] = [];
  started = 0;
  inFlight = 0;
  inputs = 0;
  secondInputs = 0;
  /** Whether samples count: false during warm-up and after the drain ends. */
  measuring = true;

  record(metric: MetricName, ms: number): void {
    if (!this.measuring) return;
    this.hists[metric].recordMs(ms);
    if (metric === "bot-lateness") this.secondLateness.recordMs(ms);
  }

  inputSent(): void {
    this.inputs++;
    this.secondInputs++;
  }

  get finished(): number {
    return this.games.filter((g) => g.outcome === "completed").length;
  }

  get failed(): number {
    return this.games.filter((g) => g.outcome !== "completed").length;
  }
}
