export { loadRttTable, edgeRtt, oneWayDelays, DEFAULT_RTT_FILE } from "./rtt.js";
export type { RttTable, Placement, EdgeKind, EdgeRtt } from "./rtt.js";
export { planEdges, CALL_GRAPH, BROWSER_TARGETS } from "./plan.js";
export type { PlanEdgeOptions, PlannedEdge } from "./plan.js";
export { startToxiproxy, findToxiproxy, ToxiproxyError, TOXIPROXY_VERSION, DEFAULT_TOXIPROXY_BIN } from "./toxiproxy.js";
export type { Toxiproxy } from "./toxiproxy.js";
export { emulate } from "./emulate.js";
export type { ActiveEdge, Emulation } from "./emulate.js";
