import type { ComponentName } from "@flaplab/component";

export const APP_NAME = "flaplab";
/** Region for groups placed in "local" unless the options say otherwise. */
export const DEFAULT_REGION = "us-east-1";
/** Container port of the Connect host (HTTP/1.1 and h2c). */
export const CONNECT_PORT = 8080;
/** Container port of the stream server (TLS: WebTransport over HTTP/2 and its WebSocket mapping). */
export const STREAM_PORT = 8443;
/** Data directory inside the container (task-local ephemeral storage). */
export const DATA_DIR = "/var/lib/flaplab";
/** Cloud Map namespace SST's Vpc creates; services register as `<name>.<stage>.<app>.sst`. */
export const CLOUD_MAP_NAMESPACE = "sst";

/**
 * Idle timeout of a stream session on the stream server (FLAPLAB_STREAM_IDLE_TIMEOUT_MS, ms): a
 * session with no bytes either way this long is closed by the server, with a close code and a
 * reason the page can show. Shorter than the load balancer's idle timeout, so a quiet stream ends
 * that way rather than being cut by the balancer.
 */
export const STREAM_IDLE_TIMEOUT_MS = 60_000;
/**
 * Idle timeout of every load balancer (seconds): a connection with no bytes either way for this
 * long is closed. Well above the stream server's own idle timeout (the WebSocket streams pass the
 * same balancer), and up to the engine's lifetime of an untouched game (600 s, idleTtlMs), so the
 * stream idle timeout can be raised that far without the balancer cutting streams first.
 */
export const ALB_IDLE_TIMEOUT_S = 600;
/**
 * Idle timeout of the Connect host (FLAPLAB_IDLE_TIMEOUT_MS): longer than the balancer's, so the
 * balancer, never the task, closes an idle keep-alive connection (a task closing one first races
 * the balancer's next request on it and the player gets a 502).
 */
export const SERVER_IDLE_TIMEOUT_MS = (ALB_IDLE_TIMEOUT_S + 30) * 1000;
/**
 * The load balancers' health checks of every target group (both ports check GET /healthz on the
 * Connect port): a new task takes traffic after healthyThreshold × intervalS (10 s; ELB's default
 * 5 × 30 s kept a replaced engine out for 150 s), a hung one leaves after unhealthyThreshold × intervalS.
 */
export const TARGET_HEALTH = { path: "/healthz", intervalS: 5, timeoutS: 2, healthyThreshold: 2, unhealthyThreshold: 2 } as const;
/**
 * Seconds a target drains after deregistration before ECS stops its task (ELB's default 300). The
 * server ends its own streams and games on SIGTERM (an engine moves its games to another engine
 * when there is one), so waiting longer only keeps a stopped engine's replacement from starting.
 */
export const DEREGISTRATION_DELAY_S = 5;
/**
 * Seconds from ECS starting a Fargate task to its server listening: network interface, image pull
 * (the server image is ≈ 0.3 GB) and Node's start. A typical range, not measured here.
 */
export const FARGATE_TASK_START_S = { min: 30, max: 60 } as const;

/** Services running these components keep one task: a game's stream must reach the engine holding the game. */
export const SINGLE_COPY_COMPONENTS: readonly ComponentName[] = ["engine", "music"];
/**
 * Per-address shares raised to the process-wide caps in every cloud task: behind a load balancer
 * every client connects from the balancer's address, so a share per address would be one share for
 * all players. The per-connection, per-player and per-account shares still hold.
 */
export const BEHIND_BALANCER_ENV: Readonly<Record<string, string>> = Object.freeze({
  FLAPLAB_MAX_CALLS_PER_ADDRESS: "4096",
  FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS: "1000",
  FLAPLAB_AUTH_MAX_HASHES_PER_ADDRESS: "6",
  FLAPLAB_AUTH_LOGINS_PER_ADDRESS: "100000",
  FLAPLAB_AUTH_LOGIN_FAILS_PER_ADDRESS: "100000",
  FLAPLAB_AUTH_REGISTRATIONS_PER_ADDRESS: "100000",
});
/** Header every call between components carries (the runtime's CALLER_HEADER). */
export const CALLER_HEADER = "x-flaplab-caller";
/**
 * What tells the two WebSocket links of a stream path apart on the load balancer: the WebTransport
 * ponyfill's WebSocket mapping offers the subprotocols `webtransport_kDraft1, webtransport_kDraft2`
 * (served by the stream server, 8443); the plain WebSocket link (`?link=websocket`) offers none
 * (served by the Connect host, 8080).
 */
export const WEBTRANSPORT_SUBPROTOCOL = { name: "sec-websocket-protocol", values: ["webtransport_*"] } as const;
/** Filter pattern that selects the call-log records in a service's CloudWatch log group. */
export const CALL_LOG_FILTER = '{ $.msg = "rpc" }';

/** Environment variables of a service. */
export const ENV = {
  topology: "FLAPLAB_TOPOLOGY",
  topologyJson: "FLAPLAB_TOPOLOGY_JSON",
  group: "FLAPLAB_GROUP",
  dataDir: "FLAPLAB_DATA_DIR",
  region: "FLAPLAB_REGION",
  zone: "FLAPLAB_ZONE",
  idleTimeout: "FLAPLAB_IDLE_TIMEOUT_MS",
  streamIdleTimeout: "FLAPLAB_STREAM_IDLE_TIMEOUT_MS",
  jwtPublicKey: "FLAPLAB_JWT_PUBLIC_KEY",
  jwtPrivateKey: "FLAPLAB_JWT_PRIVATE_KEY",
  ticketPrivateKey: "FLAPLAB_TICKET_PRIVATE_KEY",
  ticketPublicKey: "FLAPLAB_TICKET_PUBLIC_KEY",
  scoreDatabaseUrl: "FLAPLAB_SCORE_DATABASE_URL",
  snapshotStore: "FLAPLAB_SNAPSHOT_STORE",
} as const;
