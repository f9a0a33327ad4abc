export { initiatorComponent, createInitiator, DEFAULT_VIEWPORT, DEFAULT_BIRD } from "./initiator.js";
export type { InitiatorDeps, StreamEndpoints } from "./initiator.js";
