import { PIPES_PER_WORLD } from "./generate.js";

/**
 * The shape of every world the generator produces, so that components receiving a world (the
 * engine's StartGame) can refuse anything else. With a viewport of W×H accepted by `GenerateWorld`:
 *
 * - exactly `PIPES_PER_WORLD` (100) pipes;
 * - width in `minViewportWidth`…`maxViewportSize`, height in `minViewportHeight`…`maxViewportSize`;
 * - a whole-px pipe spacing from ⌊W/4⌋ to ⌊W/4⌋ + ⌊W/4⌋ − 1, so never above W/2;
 * - whole-px gaps inside the viewport: 0 ≤ gapStart, 1 ≤ gapHeight, gapStart + gapHeight ≤ H.
 */
export const WORLD_LIMITS = Object.freeze({
  /** Pipes in a world: the generator always makes exactly this many. */
  maxPipes: PIPES_PER_WORLD,
  minViewportWidth: 4,
  minViewportHeight: 19,
  maxViewportSize: 10_000,
  /** The largest pipe spacing as a fraction of the viewport width. */
  maxSpacingPerWidth: 0.5,
});

/** The most pipes a generated world has (= `PIPES_PER_WORLD`). */
export const MAX_PIPES_PER_WORLD = WORLD_LIMITS.maxPipes;
