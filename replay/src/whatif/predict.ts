import type { RttTable } from "@flaplab/netem";
import type { Layout, Location } from "./layout.js";
import { modelCalls, type WhatifModel } from "./model.js";
import { pathShape, type PathTerm } from "./paths.js";
import { PREDICTED_METRICS, type PredictedMetric } from "./study.js";

// A metric's predicted median for a placement: the fitted base, the networked calls' hops scaled
// by their share, the RTTs on the path and the browser's round trips.

export interface MetricPrediction {
  readonly ms: number;
  /** The critical path: each part and its ms (they add up to ms). */
  readonly terms: readonly PathTerm[];
}

/** One seed's prediction of one metric for a player at `browser`. */
export function predictMetric(model: WhatifModel, seed: string, metric: PredictedMetric, layout: Layout, browser: Location, table: RttTable): MetricPrediction {
  const fit = model.metrics[seed]?.[metric];
  if (fit === undefined) throw new Error(`the model has no ${metric} figures for seed ${seed}`);
  const calls = modelCalls(model);
  const shape = pathShape(metric, layout, browser, model.actions, (c) => calls.get(c.key)?.hopMs ?? 0, table);
  const terms: PathTerm[] = [{ label: "in-process work (handlers, tick, browser)", kind: "base", ms: fit.baseMs }];
  if (shape.browserCallRttMs > 0) {
    terms.push({ label: `${shape.browserCallLabel} (${fit.browserRoundTrips.toFixed(2)} × RTT)`, kind: "browser", ms: fit.browserRoundTrips * shape.browserCallRttMs });
  }
  for (const h of shape.hops) terms.push({ ...h, label: `${h.label} (× ${fit.hopShare.toFixed(2)})`, ms: h.ms * fit.hopShare });
  terms.push(...shape.rtt);
  return { ms: terms.reduce((s, t) => s + t.ms, 0), terms };
}

/** A metric over the model's seeds: the mean of each seed's prediction, term by term. */
export function predictAcrossSeeds(model: WhatifModel, metric: PredictedMetric, layout: Layout, browser: Location, table: RttTable): MetricPrediction {
  const per = model.seeds.map((seed) => predictMetric(model, seed, metric, layout, browser, table));
  const terms = per[0]!.terms.map((t, i) => ({ ...t, ms: per.reduce((s, p) => s + p.terms[i]!.ms, 0) / per.length }));
  return { ms: per.reduce((s, p) => s + p.ms, 0) / per.length, terms };
}

export interface PlayerShare {
  readonly region: string;
  readonly weight: number;
}

export interface PlacementPrediction {
  readonly layout: Layout;
  readonly perRegion: readonly { readonly region: string; readonly metrics: Readonly<Record<PredictedMetric, MetricPrediction>> }[];
  /** Player-weighted medians. */
  readonly weighted: Readonly<Record<PredictedMetric, number>>;
}

/** Every metric for every player region (the browser in zone a of its region), and their weighted means. */
export function predictPlacement(model: WhatifModel, layout: Layout, players: readonly PlayerShare[], table: RttTable): PlacementPrediction {
  const perRegion = players.map((p) => ({
    region: p.region,
    metrics: Object.fromEntries(PREDICTED_METRICS.map((m) => [m, predictAcrossSeeds(model, m, layout, { region: p.region, zone: "a" }, table)])) as Record<PredictedMetric, MetricPrediction>,
  }));
  const total = players.reduce((s, p) => s + p.weight, 0);
  const weighted = Object.fromEntries(
    PREDICTED_METRICS.map((m) => [m, perRegion.reduce((s, r, i) => s + r.metrics[m].ms * players[i]!.weight, 0) / total]),
  ) as Record<PredictedMetric, number>;
  return { layout, perRegion, weighted };
}

/** Ranks by weighted input → audio, then start game, then fewer regions and fewer processes (cheaper to run). */
export function comparePredictions(a: PlacementPrediction, b: PlacementPrediction): number {
  const round = (x: number) => Math.round(x * 100) / 100;
  return (
    round(a.weighted.input_to_audio) - round(b.weighted.input_to_audio) ||
    round(a.weighted.start_game) - round(b.weighted.start_game) ||
    round(a.weighted.input_to_effect) - round(b.weighted.input_to_effect) ||
    new Set(a.layout.map((g) => g.region)).size - new Set(b.layout.map((g) => g.region)).size ||
    a.layout.length - b.layout.length
  );
}
