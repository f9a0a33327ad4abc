import type { ComponentName } from "@flaplab/component";

/**
 * Which components each component calls (apps/server/src/components.ts wires these clients;
 * a test keeps the two in step).
 */
export const CALL_GRAPH: Readonly<Record<ComponentName, readonly ComponentName[]>> = {
  auth: [],
  worldgen: [],
  engine: ["music", "score"],
  initiator: ["worldgen", "engine"],
  music: [],
  score: [],
};

/** Components the browser calls over Connect (the base URLs in the web client's /config.json). */
export const BROWSER_CONNECT: readonly ComponentName[] = ["auth", "initiator", "score"];

/** Fully qualified proto service of each component: its Connect routes are `/<service>/<Method>`. */
export const CONNECT_SERVICES: Readonly<Record<ComponentName, string>> = {
  auth: "flaplab.auth.v1.AuthService",
  worldgen: "flaplab.worldgen.v1.WorldGenService",
  engine: "flaplab.engine.v1.EngineService",
  initiator: "flaplab.initiator.v1.InitiatorService",
  music: "flaplab.music.v1.MusicService",
  score: "flaplab.score.v1.ScoreService",
};

/**
 * Methods only components may call (`internalMethods` of each component's definition; a test keeps
 * the two in step). The runtime answers a player's call to them with permission_denied; the public
 * load balancers refuse them before they reach a task.
 */
export const INTERNAL_METHODS: Readonly<Record<ComponentName, readonly string[]>> = {
  auth: [],
  worldgen: ["GenerateWorld"],
  engine: ["StartGame", "HandleInput", "ResumeGame"],
  initiator: [],
  music: ["PlayMusic"],
  score: ["RecordRun"],
};

/** The request paths of a component's internal methods (`/<service>/<Method>`, the same in Connect, gRPC and gRPC-Web). */
export function internalPaths(component: ComponentName): readonly string[] {
  return INTERNAL_METHODS[component].map((m) => `/${CONNECT_SERVICES[component]}/${m}`);
}

/** Stream paths browsers open on the stream server (WebTransport, or its WebSocket mapping). */
export const STREAM_PATHS: Readonly<Partial<Record<ComponentName, string>>> = {
  engine: "/engine/v1/game",
  music: "/music/v1/music",
};

/** Load-balancer path pattern that matches every Connect/gRPC/gRPC-Web route of a component. */
export function connectPathPattern(component: ComponentName): string {
  return `/${CONNECT_SERVICES[component]}/*`;
}

/** Load-balancer path pattern that matches a component's stream path (query string aside). */
export function streamPathPattern(component: ComponentName): string | undefined {
  const path = STREAM_PATHS[component];
  return path === undefined ? undefined : `${path}*`;
}
