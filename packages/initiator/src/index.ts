export { initiatorComponent, createInitiator, DEFAULT_VIEWPORT, DEFAULT_BIRD } from "./initiator.js";
export type { InitiatorDeps, StreamEndpoints, StreamTicketIssuer } from "./initiator.js";
