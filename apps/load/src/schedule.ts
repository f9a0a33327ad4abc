// The run's schedule: when each bot's first game (players) or each game (arrivals) is meant to
// start, ms from the run's start, and how it is shared among the workers.
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { LoadShape } from "./options.js";
import type { BotShare } from "./protocol.js";

/** A seeded generator in [0, 1) (pure-rand's xoroshiro128+), so a run's arrivals repeat with its --seed. */
export function seededRandom(seed: number): () => number {
  const rng = xoroshiro128plus(seed);
  return () => uniformFloat64(rng);
}

/**
 * Intended start times, ascending. Players: N first starts spread evenly over the ramp (the first
 * at 0). Arrivals: games in [0, duration) at `rate` per second, evenly (steady) or with
 * exponential gaps (poisson, seeded).
 */
export function intendedStarts(shape: LoadShape, durationMs: number, seed: number): number[] {
  if (shape.kind === "players") {
    return Array.from({ length: shape.players }, (_, i) => (shape.rampMs * i) / shape.players);
  }
  const gap = 1000 / shape.rate;
  const starts: number[] = [];
  if (shape.arrivals === "steady") {
    for (let t = 0; t < durationMs; t = starts.length * gap) starts.push(t);
    return starts;
  }
  const random = seededRandom(seed);
  for (let t = -Math.log(1 - random()) * gap; t < durationMs; t += -Math.log(1 - random()) * gap) starts.push(t);
  return starts;
}

/** Bot i goes to worker i mod K: every worker gets an even share of the ramp or the arrivals. */
export function shareOut(starts: readonly number[], workers: number): BotShare[][] {
  const shares: BotShare[][] = Array.from({ length: workers }, () => []);
  starts.forEach((startMs, index) => {
    shares[index % workers]!.push({ index, startMs });
  });
  return shares;
}

/**
 * Accounts for one worker's arrivals: a pool its games take turns on (one player may hold 3
 * unfinished games and log in 20 times a minute): enough that each account holds at most one game
 * at a time when games last `gameMs`.
 */
export function accountPool(arrivals: number, ratePerWorker: number, gameMs: number): number {
  return Math.min(arrivals, Math.ceil((ratePerWorker * (gameMs + 10_000)) / 1000) + 2);
}
