export { initiatorComponent, createInitiator, DEFAULT_VIEWPORT, DEFAULT_BIRD } from "./initiator.js";
export type { InitiatorDeps, MusicEndpoints, StreamTicketIssuer } from "./initiator.js";
export { type EnginePlacement, type EngineTarget, type RendezvousPlacementOptions, rendezvousPlacement, singleEngine } from "./placement.js";
