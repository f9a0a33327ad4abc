import type { LatencyRow, LatencySummary } from "./latency-log.js";

export type AppState = "login" | "ready" | "playing" | "over";

/** The last finished game, as automation reads it (JSON-safe: the seed is a decimal string). */
export interface LastGame {
  readonly gameId: string;
  readonly seed: string;
  readonly score: number;
  readonly ticks: number;
  /** The score component stored the run (from the engine's GameSummary). */
  readonly recorded: boolean;
  /** Why the game ended abnormally, or null. */
  readonly error: string | null;
  /** Times the game's stream was opened again where the game continued (its engine drained or died). */
  readonly reconnections: number;
  /** Inputs sent again after those reconnections. */
  readonly resentInputs: number;
}

/** The engine's GameSummary, JSON-safe. */
export interface EngineSummaryView {
  readonly score: number;
  readonly ticks: number;
  readonly recorded: boolean;
  readonly recordError: string;
  /** Not recorded yet: the engine keeps the run and records it when the score component is back. */
  readonly recordPending: boolean;
  /** Tick frames only. */
  readonly framesSent: number;
  readonly frameBytes: number;
  readonly framesUnder1kb: number;
  readonly acksSent: number;
  readonly ackBytes: number;
  readonly tickLatenessP50Us: number;
  readonly tickLatenessMaxUs: number;
  readonly ticksSkipped: number;
}

/** The client's measurements of the last game plus the engine's own summary. */
export interface GameReport extends LatencySummary {
  readonly engine: EngineSummaryView | null;
}

/** `window.flaplab`: what browser automation reads. */
export interface FlapLabAutomation {
  readonly state: AppState;
  /** Rows of the current (or last) game's latency log. */
  log(): LatencyRow[];
  /** That log as CSV. */
  csv(): string;
  /** Summary of the last finished game, or null. */
  summary(): GameReport | null;
  readonly lastGame: LastGame | null;
  /** FlapLab trace JSON (flaplab-trace/1) of the last finished game, or null. */
  trace(): string | null;
  /** Receives the same `flaplab:state` and `flaplab:gameover` events as `window`. */
  readonly events: EventTarget;
  /** The logged-in player's bearer token, or null. */
  token(): string | null;
  /** The tick of the current game's latest frame, or null before its first frame. */
  tick(): number | null;
  /**
   * From the next game on, the page presses Space itself before each of these ticks: when the
   * frame of tick T−1 arrives (once per tick; the start press stays the caller's). Presses follow
   * the game's tick clock, so a game paused by a fault stays comparable to the simulator. An
   * empty list turns it off.
   */
  pressAtTicks(ticks: readonly number[]): void;
}

export interface AutomationSource {
  state(): AppState;
  rows(): readonly LatencyRow[];
  csv(): string;
  report(): GameReport | null;
  lastGame(): LastGame | null;
  trace(): string | null;
  token(): string | null;
  tick(): number | null;
  pressAtTicks(ticks: readonly number[]): void;
}

export function createAutomation(source: AutomationSource): FlapLabAutomation {
  const events = new EventTarget();
  return {
    get state() {
      return source.state();
    },
    log: () => source.rows().map((r) => ({ ...r })),
    csv: () => source.csv(),
    summary: () => source.report(),
    get lastGame() {
      return source.lastGame();
    },
    trace: () => source.trace(),
    token: () => source.token(),
    tick: () => source.tick(),
    pressAtTicks: (ticks) => source.pressAtTicks(ticks),
    events,
  };
}

/** Dispatches `name` with `detail` on window and on `automation.events`. */
export function emit(automation: FlapLabAutomation, name: "flaplab:state" | "flaplab:gameover", detail: unknown): void {
  automation.events.dispatchEvent(new CustomEvent(name, { detail }));
  window.dispatchEvent(new CustomEvent(name, { detail }));
}

declare global {
  interface Window {
    /** The canvas colours browser tests look for in screenshots. */
    flaplabPalette: { sky: string; pipe: string; bird: string; scoreText: string };
    flaplab?: FlapLabAutomation;
  }
}
