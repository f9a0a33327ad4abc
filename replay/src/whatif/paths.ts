import type { RttTable } from "@flaplab/netem";
import type { Action, CallEdge } from "./call-graph.js";
import { groupOfComponent, isNetworked, type Layout, type Location, rttBetween } from "./layout.js";
import type { PredictedMetric } from "./study.js";

// What the browser measures, and the path each measurement takes through a placement.

/**
 * Where each metric starts and ends, as the browser's latency log defines it: the action the
 * player starts (a component's verb) and what ends the measurement: the action's answer, or a
 * message a component pushes on its stream.
 */
export const METRIC_PATHS: Readonly<Record<PredictedMetric, { readonly label: string; readonly entry: string; readonly ends: "answer" | { readonly push: string } }>> = {
  input_to_audio: { label: "input → audio", entry: "engine.HandleInput", ends: { push: "music" } },
  input_to_effect: { label: "input → effect", entry: "engine.HandleInput", ends: { push: "engine" } },
  start_game: { label: "start game", entry: "initiator.StartGame", ends: "answer" },
};

/** The calls of an action that lie on a metric's path: all of them when the player waits for the answer, else those to the component that pushes. */
export function callsOnPath(metric: PredictedMetric, actions: readonly Action[]): CallEdge[] {
  const def = METRIC_PATHS[metric];
  const action = actions.find((a) => `${a.entry.component}.${a.entry.verb}` === def.entry);
  if (action === undefined) return [];
  const ends = def.ends;
  return ends === "answer" ? [...action.calls] : action.calls.filter((c) => c.callee === ends.push);
}

export interface PathTerm {
  readonly label: string;
  readonly kind: "base" | "hop" | "rtt" | "browser";
  readonly ms: number;
}

/** A metric's path through a placement, before the fitted figures scale it. */
export interface PathShape {
  /** RTTs the path crosses whole or in halves (the browser's call excepted). */
  readonly rtt: readonly PathTerm[];
  /** The networked calls' hops (the model's per-call hop, unscaled). */
  readonly hops: readonly PathTerm[];
  /** The RTT between the browser and the component it calls, for a metric that waits for an answer (0 otherwise). */
  readonly browserCallRttMs: number;
  readonly browserCallLabel: string;
}

/**
 * The path of `metric` for a player at `browser`: the browser's legs, and each call on the path
 * (whole for an answer the player waits for; the request leg for a push).
 */
export function pathShape(
  metric: PredictedMetric,
  layout: Layout,
  browser: Location,
  actions: readonly Action[],
  hopOf: (call: CallEdge) => number,
  table: RttTable,
): PathShape {
  const def = METRIC_PATHS[metric];
  const entryComponent = def.entry.split(".")[0]!;
  const entry = groupOfComponent(layout, entryComponent);
  const rtt: PathTerm[] = [];
  const hops: PathTerm[] = [];
  const half = def.ends !== "answer";
  let browserCallRttMs = 0;
  if (half) rtt.push({ label: `browser → ${entryComponent} (½ RTT)`, kind: "rtt", ms: rttBetween(table, browser, entry) / 2 });
  else browserCallRttMs = rttBetween(table, browser, entry);
  for (const call of callsOnPath(metric, actions)) {
    if (!isNetworked(layout, call.caller, call.callee)) continue;
    const a = groupOfComponent(layout, call.caller);
    const b = groupOfComponent(layout, call.callee);
    const r = rttBetween(table, a, b);
    if (r > 0) rtt.push({ label: `${call.caller} → ${call.callee} ${call.method} (${half ? "½ RTT" : "RTT"})`, kind: "rtt", ms: half ? r / 2 : r });
    hops.push({ label: `${call.callee}.${call.method} hop`, kind: "hop", ms: hopOf(call) });
  }
  if (def.ends !== "answer") {
    const pusher = def.ends.push;
    rtt.push({ label: `${pusher} → browser (½ RTT)`, kind: "rtt", ms: rttBetween(table, groupOfComponent(layout, pusher), browser) / 2 });
  }
  return { rtt, hops, browserCallRttMs, browserCallLabel: `browser ⇄ ${entryComponent} call` };
}

export const sumMs = (terms: readonly PathTerm[]): number => terms.reduce((s, t) => s + t.ms, 0);
