import type { RttTable } from "@flaplab/netem";
import { type Layout, type Location, rttBetween } from "./layout.js";
import type { WhatifModel } from "./model.js";
import { enumerateLayouts } from "./placements.js";
import { comparePredictions, type PlacementPrediction, predictPlacement } from "./predict.js";

// The placements `--validate` runs besides the repository's: picked from every placement over the
// given regions and zones so that they spread over the predicted range (best to worst), none the
// same as a repository topology, so the check is made where the model has seen nothing.

export interface Placed {
  readonly layout: Layout;
  readonly browser: Location;
}

/**
 * A placement up to the names of its places: its groups' components and the emulated RTT between
 * every two groups and from the browser to each. Two placements with one key play the same.
 */
export function placementKey(p: Placed, table: RttTable): string {
  const groups = [...p.layout].sort((a, b) => a.components.join("+").localeCompare(b.components.join("+")));
  const rtts = groups.map((g, i) => [rttBetween(table, p.browser, g), ...groups.slice(i + 1).map((h) => rttBetween(table, g, h))].map((x) => x.toFixed(1)).join(","));
  return `${groups.map((g) => g.components.join("+")).join("|")} ${rtts.join(";")}`;
}

export interface GenerateOptions {
  readonly regions: readonly string[];
  readonly zones: readonly string[];
  /** Where the player (the study's browser) is. */
  readonly browser: Location;
  readonly count: number;
}

/**
 * `count` placements spread over the ranking (the best, then evenly to the worst), leaving out any
 * that plays as one of `known` (the repository's topologies) and any two that predict alike.
 */
export function spreadPlacements(model: WhatifModel, table: RttTable, options: GenerateOptions, known: readonly Placed[]): PlacementPrediction[] {
  const knownKeys = new Set(known.map((k) => placementKey(k, table)));
  const players = [{ region: options.browser.region, weight: 1 }];
  const seen = new Set<string>();
  const candidates: PlacementPrediction[] = [];
  for (const layout of enumerateLayouts({ regions: options.regions, zones: options.zones, processes: "both", engines: 1 })) {
    if (knownKeys.has(placementKey({ layout, browser: options.browser }, table))) continue;
    const p = predictPlacement(model, layout, players, table);
    const figures = Object.values(p.weighted).map((x) => x.toFixed(1)).join("/");
    if (seen.has(figures)) continue;
    seen.add(figures);
    candidates.push(p);
  }
  candidates.sort(comparePredictions);
  if (candidates.length <= options.count) return candidates;
  const picks = new Set<number>();
  for (let i = 0; i < options.count; i++) picks.add(Math.round((i * (candidates.length - 1)) / (options.count - 1 || 1)));
  return [...picks].sort((a, b) => a - b).map((i) => candidates[i]!);
}
