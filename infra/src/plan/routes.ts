import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { BROWSER_CONNECT, connectPathPattern, internalPaths, streamPathPattern } from "../calls.js";
import type { ListenerCondition } from "../listener-limits.js";
import { CALLER_HEADER, CONNECT_PORT, STREAM_PORT, WEBTRANSPORT_SUBPROTOCOL } from "./constants.js";
import { publicHost, type StageNames } from "./naming.js";
import { type PlacedGroup, type Placement, placesOf } from "./placement.js";
import type { AlbRoute, CallEdgePlan } from "./types.js";

// The public routes of each group on its region's shared load balancer.

/** Each group's public routes, by service name (an empty list for a group with none). */
export function planRoutes(placement: Placement, edges: readonly CallEdgePlan[], names: StageNames): ReadonlyMap<string, AlbRoute[]> {
  const routesOf = new Map<string, AlbRoute[]>();
  for (const p of placement.groups) {
    routesOf.set(
      p.name,
      p.spec.components.flatMap((c) => componentRoutes(placement, p, c, edges, names)),
    );
  }
  return routesOf;
}

/** The routes of one component in one group: its Connect service, its internal methods for callers in other regions, its streams. */
function componentRoutes(placement: Placement, p: PlacedGroup, c: ComponentName, edges: readonly CallEdgePlan[], names: StageNames): AlbRoute[] {
  const idx = COMPONENT_NAMES.indexOf(c);
  const calledFromElsewhere = edges.some((e) => e.callee === c && e.crossRegion);
  const routes: AlbRoute[] = [];
  if (BROWSER_CONNECT.includes(c) || calledFromElsewhere) {
    routes.push(
      route({
        path: connectPathPattern(c),
        service: p.name,
        component: c,
        kind: "connect",
        forward: `${CONNECT_PORT}/http`,
        priority: 100 + idx * 10,
        reason: BROWSER_CONNECT.includes(c) ? "browser" : "cross-region",
      }),
    );
  }
  if (calledFromElsewhere) routes.push(...internalRoutes(p, c, idx));
  routes.push(...streamRoutes(placement, p, c, idx, names));
  return routes;
}

/**
 * Components in other regions reach internal methods through the public listener; only requests
 * with the components' caller header get past the refusals. The header is a filter, not the gate:
 * the runtime still requires a component credential.
 */
function internalRoutes(p: PlacedGroup, c: ComponentName, idx: number): AlbRoute[] {
  return internalPaths(c).map((path, k) =>
    route({
      path,
      service: p.name,
      component: c,
      kind: "internal",
      header: { name: CALLER_HEADER, values: ["*"] },
      forward: `${CONNECT_PORT}/http`,
      priority: 10 + idx * 5 + k,
      reason: "cross-region",
    }),
  );
}

/**
 * A stream component's two links on its path: the WebTransport link's WebSocket mapping (its
 * subprotocols) to the stream server; the plain WebSocket link, one priority later, to the Connect
 * host. Engine shards share the stream path: each matches its own host name, at its own priority.
 */
function streamRoutes(placement: Placement, p: PlacedGroup, c: ComponentName, idx: number, names: StageNames): AlbRoute[] {
  const stream = streamPathPattern(c);
  if (stream === undefined) return [];
  const places = placesOf(placement, c);
  const shard = places.length > 1 ? places.indexOf(p) : undefined;
  const base = 100 + idx * 10 + 5 + (shard === undefined ? 0 : 1000 * (shard + 1));
  const onHost = shard === undefined ? {} : { host: publicHost(names, p.spec.name) };
  return [
    route({
      path: stream,
      service: p.name,
      component: c,
      kind: "stream",
      header: { name: WEBTRANSPORT_SUBPROTOCOL.name, values: [...WEBTRANSPORT_SUBPROTOCOL.values] },
      forward: `${STREAM_PORT}/https`,
      priority: base,
      reason: "browser",
      ...onHost,
    }),
    route({ path: stream, service: p.name, component: c, kind: "websocket", forward: `${CONNECT_PORT}/http`, priority: base + 1, reason: "browser", ...onHost }),
  ];
}

/** A route with its listener conditions: the path, then the header, then the host, one field per condition. */
function route(r: Omit<AlbRoute, "conditions">): AlbRoute {
  const conditions: ListenerCondition[] = [{ pathPattern: { values: [r.path] } }];
  if (r.header) conditions.push({ httpHeader: { httpHeaderName: r.header.name, values: [...r.header.values] } });
  if (r.host) conditions.push({ hostHeader: { values: [r.host] } });
  return { ...r, conditions };
}
