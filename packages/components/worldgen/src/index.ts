export { generateWorld, randomSeed, PIPES_PER_WORLD } from "./generate.js";
export type { PipeSpec, ViewportSize, WorldSpec } from "./generate.js";
export {
  worldgenComponent,
  createWorldGen,
  MIN_VIEWPORT_WIDTH,
  MIN_VIEWPORT_HEIGHT,
  MAX_VIEWPORT_SIZE,
} from "./service.js";
export type { WorldGenDeps } from "./service.js";
export { WORLD_LIMITS, MAX_PIPES_PER_WORLD } from "./limits.js";
