import type { Action, CallEdge } from "./call-graph.js";
import type { PredictedMetric } from "./study.js";

// The model `pnpm whatif` predicts from, as written by --model-out.

export const MODEL_FORMAT = "flaplab-whatif-model/1";

export interface ModelCall extends CallEdge {
  /** The callee's own time (its record of a networked call: guard to answer), median, ms; null when never networked. */
  readonly ownMs: number | null;
  /** The caller's whole call where it was direct (one process), median, ms; null when never direct. */
  readonly directMs: number | null;
  /** A networked call's cost beyond the callee's own time and the emulated RTT, ms. */
  readonly hopMs: number;
  /** Where hopMs comes from: the deployments whose logs had the call networked, or "other calls" when none did. */
  readonly hopFrom: readonly string[];
  /** The metrics whose path the call is on; empty: it runs beside the player's path. */
  readonly onPath: readonly PredictedMetric[];
}

export interface ModelAction extends Action {
  readonly calls: readonly ModelCall[];
}

/** One metric's fitted figures, for one seed. */
export interface MetricFit {
  /** The path's time with every call direct and no RTT: handlers, the tick, the browser, ms. */
  readonly baseMs: number;
  /** How much of the networked calls' hops the player waits for (×). */
  readonly hopShare: number;
  /** Round trips the browser's call to the entry component costs (a metric that waits for an answer). */
  readonly browserRoundTrips: number;
  /** "fitted" from deployments with a browser RTT, else "prior" (one round trip). */
  readonly browserRoundTripsFrom: "fitted" | "prior";
  /** The deployments the figures were fitted on. */
  readonly from: readonly string[];
}

/** A component's CPU, from the runs where it had a process of its own. */
export interface ComponentCpu {
  readonly component: string;
  readonly runs: number;
  /** The process's background with no game, µs a second; null when the runs did not watch it idle (it is then in the figures below). */
  readonly idleUsPerSecond: number | null;
  /** CPU of a game's start (the login and StartGame), µs, net of the idle background; null with it. */
  readonly startUs: number | null;
  /** CPU a game costs once (its start, and its end), µs. */
  readonly perGameUs: number;
  /** CPU per second of play, µs (net of the idle background where it is known). */
  readonly perGameSecondUs: number;
  /** CPU per call it handled, µs (all its CPU over its calls); null when it handled none. */
  readonly perCallUs: number | null;
  readonly calls: string;
}

export interface WhatifModel {
  readonly format: typeof MODEL_FORMAT;
  readonly study: string;
  readonly fittedOn: readonly string[];
  readonly seeds: readonly string[];
  /** Mean game length per seed, s. */
  readonly gameSeconds: Readonly<Record<string, number>>;
  readonly actions: readonly ModelAction[];
  readonly metrics: Readonly<Record<string, Readonly<Record<PredictedMetric, MetricFit>>>>;
  readonly cpu: readonly ComponentCpu[];
}

/** Every call of the model by key. */
export function modelCalls(model: WhatifModel): Map<string, ModelCall> {
  return new Map(model.actions.flatMap((a) => a.calls.map((c) => [c.key, c] as const)));
}
