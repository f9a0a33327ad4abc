import { COMPONENT_NAMES, type ComponentName, nodeFlagsFor } from "@flaplab/component";
import { COMPONENT_KEY, COMPONENT_PUBLIC_KEY } from "@flaplab/identity/settings";
import type { GroupSpec, NetworkSettings, Topology } from "@flaplab/runtime";
import { nameFor } from "@flaplab/settings";
import { BROWSER_CONNECT, CALL_GRAPH, connectPathPattern, internalPaths, STREAM_PATHS, streamPathPattern } from "./calls.js";
import { type ListenerCondition, listenerRuleProblems } from "./listener-limits.js";
import { regionRttMs } from "./rtt.js";
import { type CollectorPlan, collectorPlan, type TracingBackend } from "./tracing.js";

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

/** Fargate CPU sizes and the memory sizes each allows. */
export const FARGATE_SIZES = {
  "0.25 vCPU": ["0.5 GB", "1 GB", "2 GB"],
  "0.5 vCPU": ["1 GB", "2 GB", "3 GB", "4 GB"],
  "1 vCPU": ["2 GB", "3 GB", "4 GB", "5 GB", "6 GB", "7 GB", "8 GB"],
  "2 vCPU": ["4 GB", "5 GB", "6 GB", "7 GB", "8 GB", "9 GB", "10 GB", "11 GB", "12 GB", "13 GB", "14 GB", "15 GB", "16 GB"],
  "4 vCPU": ["8 GB", "10 GB", "12 GB", "14 GB", "16 GB", "20 GB", "24 GB", "28 GB", "30 GB"],
} as const;
export type FargateCpu = keyof typeof FARGATE_SIZES;
export type FargateMemory = `${number} GB`;
export interface TaskSize {
  readonly cpu: FargateCpu;
  readonly memory: FargateMemory;
}
/** The smallest Fargate task; no group gets it unless the options say so. */
export const DEFAULT_TASK_SIZE: TaskSize = { cpu: "0.25 vCPU", memory: "0.5 GB" };
/**
 * The largest CPU time a component's server used in one 100 ms window (Fargate's quota period: a
 * task over its share waits for the next period), in ms, one game at a time (the study's load):
 * `apps/server/test/measure-task-cpu.ts`, the built server on a loaded 2-vCPU VM, 2–3 rounds each.
 * auth: Register + Login, two scrypt hashes (1.1–1.8 s of CPU; a median window of 49–64 ms), in the
 * monolith; the others each in its own process of `microservices` over a whole game: the engine
 * 16–50 (0.34–0.51 s of CPU a game, median window 1.5–1.8 ms), worldgen 52–83 (GenerateWorld),
 * initiator 25–56, music 4–31, score 1–6 (SQLite here; Postgres over TLS in the cloud).
 */
export const MEASURED_PEAK_WINDOW_MS: Readonly<Record<ComponentName, number>> = {
  auth: 104,
  worldgen: 83,
  engine: 50,
  initiator: 56,
  music: 31,
  score: 6,
};
/** Share of the window a task's CPU must leave above a group's measured peak. */
export const CPU_HEADROOM = 1.25;
/** The sizes taskSizeFor picks from: each CPU with the smallest memory Fargate allows with it. */
export const MEASURED_TASK_SIZES = {
  half: { cpu: "0.5 vCPU", memory: "1 GB" },
  one: { cpu: "1 vCPU", memory: "2 GB" },
} as const satisfies Record<string, TaskSize>;
/** Fargate's CPU architecture for every task: Graviton (arm64), 20 % cheaper than x86_64 per vCPU and GB. */
export const TASK_ARCHITECTURE = "arm64";

/**
 * Seconds one build of apps/server/Dockerfile takes on 2 vCPUs, partly estimated: 268 s measured
 * for every step but the base image's own (apps/server/test/image-build.slow.test.ts: pnpm fetch
 * 5 s, install, turbo build and production install 242 s, copying 21 s), plus apt-get and pulling
 * the base image (≈ 30–60 s, not measured here). Pushing the image (≈ 0.3 GB) and BuildKit's cache
 * to ECR is not included (not measured here). An arm64 build on an x86 machine runs under
 * emulation, several times slower: build on an arm64 runner.
 */
export const IMAGE_BUILD_S = { min: 300, max: 330 } as const;
const IMAGE_RE = /^[a-z0-9][a-z0-9.-]*(:\d+)?\/[a-z0-9._/-]+(:[A-Za-z0-9_.-]{1,128}|@sha256:[a-f0-9]{64})$/;

/**
 * A group's task size from its components' measured peaks: 0.5 vCPU when its 50 ms share holds
 * the largest peak with CPU_HEADROOM, else 1 vCPU (the largest peak, auth's scrypt, is 1.04 cores
 * for a moment). Never 0.25 vCPU: its 25 ms share is below every peak but score's, and score's
 * Postgres TLS is not measured here. The monolith runs one phase at a time (a login, then a game):
 * measured whole, its peak was 93–104 ms, as auth's.
 */
export function taskSizeFor(components: readonly ComponentName[]): TaskSize {
  const peak = Math.max(0, ...components.map((c) => MEASURED_PEAK_WINDOW_MS[c]));
  return peak * CPU_HEADROOM <= 50 ? MEASURED_TASK_SIZES.half : MEASURED_TASK_SIZES.one;
}

export interface PlanOptions {
  /** SST stage; part of resource and host names ([a-z][a-z0-9-]*). */
  readonly stage: string;
  /** DNS zone (Route 53) under which the stage's host names are created: FLAPLAB_DOMAIN. */
  readonly domain: string;
  /** Region for groups placed in "local" (default us-east-1). */
  readonly defaultRegion?: string;
  /** Region of the app's default provider: SST state and the web site (default: defaultRegion). */
  readonly homeRegion?: string;
  /** Name the servers load their topology by (FLAPLAB_TOPOLOGY; default: the topology's name). */
  readonly topologyName?: string;
  /** Task size of every service (default: each group's measured size, taskSizeFor). */
  readonly size?: TaskSize;
  /** Task size per group name, overriding `size`. */
  readonly sizes?: Readonly<Record<string, TaskSize>>;
  /** Traces: "xray" puts an ADOT collector beside every server (FLAPLAB_TRACING; default "off"). */
  readonly tracing?: TracingBackend;
  /**
   * The server image, built once and pushed before the deploy (FLAPLAB_IMAGE: `<registry>/<repo>:<tag>`
   * or `…@sha256:<digest>`, linux/arm64, e.g. by infra/build-image.sh): every service of every
   * region runs it. Without it the deploy builds apps/server/Dockerfile once itself (`image.build`).
   */
  readonly image?: string;
}

/** The private key of one component, in its service's environment (packages/identity reads it). */
export function componentKeyEnv(component: ComponentName): string {
  return nameFor(COMPONENT_KEY, component);
}

/** The public key of one component, in the environment of the services it calls. */
export function componentPublicKeyEnv(component: ComponentName): string {
  return nameFor(COMPONENT_PUBLIC_KEY, component);
}

/** The SST secret holding each component's own key (Ed25519 private key, PEM). */
export const COMPONENT_KEY_SECRETS = {
  auth: "AuthKey",
  worldgen: "WorldgenKey",
  engine: "EngineKey",
  initiator: "InitiatorKey",
  music: "MusicKey",
  score: "ScoreKey",
} as const satisfies Record<ComponentName, string>;

/**
 * A stage's SST secrets, each Ed25519 PEM: the players' key pair, each component's own key and
 * the stream-ticket key (which no component signs its calls with).
 */
export const SECRET_NAMES = ["JwtPrivateKey", "JwtPublicKey", ...Object.values(COMPONENT_KEY_SECRETS), "StreamTicketKey"] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** An environment value known only at deploy time. */
export type DeployValue =
  | { readonly from: "secret"; readonly name: SecretName; readonly sensitive: boolean }
  /** The public half of a secret private key, derived at deploy time: not sensitive. */
  | { readonly from: "public-half"; readonly name: SecretName; readonly sensitive: false }
  | { readonly from: "database"; readonly name: string; readonly sensitive: true }
  | { readonly from: "snapshot-store"; readonly name: string; readonly sensitive: true };

export type ContainerPort = `${typeof CONNECT_PORT}/http` | `${typeof STREAM_PORT}/https`;

/** A rule of a region's 443 listener as the load balancer gets it: a forward to a service, or a fixed 403. */
export interface ListenerRulePlan {
  readonly priority: number;
  readonly conditions: readonly ListenerCondition[];
  readonly action: { readonly type: "forward"; readonly service: string; readonly port: ContainerPort } | { readonly type: "refuse"; readonly status: 403 };
}

/** One path rule on a region's shared HTTPS load balancer (listener 443/https). */
export interface AlbRoute {
  /** Path pattern, e.g. "/flaplab.auth.v1.AuthService/*". */
  readonly path: string;
  /** ServicePlan.name of the target. */
  readonly service: string;
  readonly component: ComponentName;
  /**
   * "internal": one internal method, forwarded only with the components' caller header (cross-region
   * calls); "stream": the WebTransport link's WebSocket mapping (its subprotocol header) to the stream
   * server; "websocket": the plain WebSocket link on the same path, to the Connect host.
   */
  readonly kind: "connect" | "stream" | "websocket" | "internal";
  /** A header the request must carry as well (any value). */
  readonly header?: { readonly name: string; readonly values: readonly string[] };
  /**
   * The Host the request must be for: a component that runs in several groups (engine shards)
   * shares its paths, so each group's routes also match its own host name.
   */
  readonly host?: string;
  readonly forward: ContainerPort;
  /** Listener rule priority, unique within the region. */
  readonly priority: number;
  /** Why the route is public: the browser calls it, or a caller in another region does. */
  readonly reason: "browser" | "cross-region";
  /** The rule's conditions as the load balancer gets them (path, then header, then host; one field each). */
  readonly conditions: readonly ListenerCondition[];
}

/** A listener rule answering a fixed 403 on the region's public listener. */
export interface AlbRefusal {
  /** Exact request path of an internal method. */
  readonly path: string;
  readonly component: ComponentName;
  readonly priority: number;
  readonly conditions: readonly ListenerCondition[];
}

export interface LoadBalancerPlan {
  /** SST component name of the region's shared Alb. */
  readonly name: string;
  /** The region's host name (`<region>.<stage>.<domain>`). */
  readonly host: string;
  /** Host names of the region's public groups; aliases (DNS records) on the same load balancer. */
  readonly aliases: readonly string[];
  /**
   * The listener's certificate: one wildcard per region, `*.<stage>.<domain>`, which covers the
   * region's host and every group's however many groups there are (ACM's default quota is 10
   * names per certificate; one name per host ran out at two more engine shards).
   */
  readonly certificate: { readonly name: string; readonly domainName: string };
  readonly url: string;
  readonly routes: readonly AlbRoute[];
  /**
   * Internal method paths refused (403) on the public listener, for every component wherever it runs:
   * after the cross-region internal routes (lower priority numbers), before every public route.
   */
  readonly refusals: readonly AlbRefusal[];
  /** Every rule of the 443 listener (refusals and routes), by priority: what the load balancer gets. */
  readonly rules: readonly ListenerRulePlan[];
  /** Seconds (ALB_IDLE_TIMEOUT_S). */
  readonly idleTimeoutS: number;
}

export interface ServicePlan {
  /** SST component and ECS service name (PascalCase of the group name). */
  readonly name: string;
  readonly group: string;
  readonly components: readonly ComponentName[];
  readonly region: string;
  /** Zone letter from the topology (a, b, c, …). */
  readonly zone: string;
  /** AWS availability zone, `<region><zone>`. */
  readonly availabilityZone: string;
  /** Index of availabilityZone in the region's VPC zone list, which is also the index of its public subnet. */
  readonly subnetIndex: number;
  readonly size: TaskSize;
  /** Cloud Map host name inside the region's VPC. */
  readonly privateHost: string;
  /** `http://<privateHost>:8080`, for callers in the same region. */
  readonly privateUrl: string;
  /** Public host name of the group (`<group>.<stage>.<domain>`), on the region's load balancer. */
  readonly publicHost: string;
  /** `https://<publicHost>` when any of its Connect routes is public. */
  readonly publicUrl?: string;
  /** Base URL browsers open this group's streams at, when it runs the engine or music. */
  readonly streamUrl?: string;
  readonly albRoutes: readonly AlbRoute[];
  /**
   * ECS deployment limits: engine and music never run two tasks at once (0 % / 100 %); others 100 % / 200 %.
   * `gapS`, for engine and music: seconds a deploy leaves the service without a task taking streams
   * (the old task's deregistration delay, the new task's start, its health checks).
   */
  readonly deployment: {
    readonly minimumHealthyPercent: number;
    readonly maximumPercent: number;
    readonly deregistrationDelayS: number;
    readonly gapS?: { readonly min: number; readonly max: number };
  };
  /**
   * Name prefix of the CloudWatch log group of the task's stdout (its pino logs and its call log).
   * AWS appends a unique suffix: the group is kept when the stage is removed, and a later deploy
   * of the same stage creates a new one beside it instead of colliding with it.
   */
  readonly logGroupPrefix: string;
  /** Plain environment values. */
  readonly environment: Readonly<Record<string, string>>;
  /** Environment values resolved at deploy time (secrets, database URL). */
  readonly deployEnvironment: Readonly<Record<string, DeployValue>>;
  /** The trace collector beside the server, when the stage is traced (its OTEL_* variables are in `environment`). */
  readonly collector?: CollectorPlan;
}

/**
 * The engines' shared snapshot store (ElastiCache, Valkey, cluster mode off, TLS and a password),
 * planned when a topology runs several engines: game snapshots and engine heartbeats.
 */
export interface SnapshotStorePlan {
  /** SST component name. */
  readonly name: string;
  readonly region: string;
  readonly engine: "valkey";
  readonly instance: string;
  /** The services that use it (every engine group and the initiator's). */
  readonly services: readonly string[];
  /** The environment variable that names it (`rediss://default:<password>@<host>:<port>`). */
  readonly env: string;
}

export interface RegionPlan {
  readonly region: string;
  /** PascalCase of the region (EuWest1), used in resource names. */
  readonly key: string;
  /** Name of the region's explicit aws.Provider. */
  readonly providerName: string;
  readonly vpcName: string;
  readonly clusterName: string;
  /** The VPC's availability zones (at least two: load balancers and RDS need two). */
  readonly availabilityZones: readonly string[];
  /** ServicePlan names in this region. */
  readonly services: readonly string[];
  /** The shared HTTPS load balancer, when anything in the region is public. */
  readonly loadBalancer?: LoadBalancerPlan;
}

/** A call between two different process groups. */
export interface CallEdgePlan {
  readonly caller: ComponentName;
  readonly callee: ComponentName;
  /** ServicePlan names. */
  readonly from: string;
  readonly to: string;
  readonly crossRegion: boolean;
  readonly crossZone: boolean;
  /** Base URL the caller dials: the callee's public HTTPS endpoint across regions, its Cloud Map name within one. */
  readonly url: string;
  readonly network: NetworkSettings;
  /** Median RTT between the two regions, when cross-region and in the table. */
  readonly rttMs?: number;
}

export interface DatabasePlan {
  readonly name: string;
  readonly engine: "postgres";
  readonly component: ComponentName;
  /** ServicePlan name of the service that uses it. */
  readonly service: string;
  readonly region: string;
  readonly instance: "t4g.micro";
  readonly storage: "20 GB";
  /** Environment variable carrying its connection URL. */
  readonly env: string;
}

/** `/config.json` of the web client (apps/web/src/config.ts). */
export interface WebConfig {
  readonly authUrl: string;
  readonly initiatorUrl: string;
  readonly scoreUrl: string;
  readonly topology: string;
  readonly http3: boolean;
}

export interface WebPlan {
  readonly name: string;
  readonly host: string;
  readonly url: string;
  /** The web site lives with the default provider. */
  readonly region: string;
  readonly config: WebConfig;
}

/**
 * The deploy's one build of the server image (no prebuilt image): `dockerfile` built from the
 * repository root for `platform` and pushed to the stage's ECR repository in the home region. Every
 * service of every region runs it by digest; tasks in other regions pull it across regions.
 */
export interface ImageBuildPlan {
  /** SST component name of the ECR repository (aws.ecr.Repository). */
  readonly repositoryComponent: "ServerImageRepository";
  /** SST component name of the image (docker-build's Image). */
  readonly imageComponent: "ServerImage";
  /** The repository's name: `flaplab-<stage>-server`; `sst remove` deletes it with its images. */
  readonly repository: string;
  /** The home region: the app's own provider creates the repository. */
  readonly region: string;
  /** The tag each build moves (the services name the image by its digest). */
  readonly tag: "server";
  /** BuildKit's registry cache in the same repository: a rebuild reruns only the steps whose inputs changed. */
  readonly cacheTag: "server-cache";
}

interface ImagePlanCommon {
  /** Fargate's platform for every task (TASK_ARCHITECTURE). */
  readonly platform: "linux/arm64";
  readonly dockerfile: "apps/server/Dockerfile";
  /** Seconds of building during the deploy (builds × IMAGE_BUILD_S, partly estimated; pushing not included). */
  readonly buildS: { readonly min: number; readonly max: number };
}

/** The image every service runs, and what building it costs a deploy: a prebuilt image, or one build by the deploy. */
export type ImagePlan =
  | (ImagePlanCommon & { readonly prebuilt: string; readonly build?: undefined; readonly builds: 0 })
  | (ImagePlanCommon & { readonly prebuilt?: undefined; readonly build: ImageBuildPlan; readonly builds: 1 });

export interface DeploymentPlan {
  readonly app: string;
  readonly stage: string;
  /** The topology's name. */
  readonly topology: string;
  readonly domain: string;
  readonly homeRegion: string;
  readonly regions: readonly RegionPlan[];
  readonly services: readonly ServicePlan[];
  readonly edges: readonly CallEdgePlan[];
  readonly databases: readonly DatabasePlan[];
  /** The engines' snapshot store, when the topology runs several engines. */
  readonly snapshotStores: readonly SnapshotStorePlan[];
  readonly web: WebPlan;
  readonly image: ImagePlan;
  /** Things the plan cannot do for this topology, in words. */
  readonly warnings: readonly string[];
}

export class PlanError extends Error {
  override readonly name = "PlanError";
}

const STAGE_RE = /^[a-z][a-z0-9-]*$/;
const DOMAIN_RE = /^(?=.{1,200}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
const REGION_RE = /^[a-z]{2}(-gov)?-[a-z]+-\d$/;
const ZONE_RE = /^[a-z]$/;
/** SST component names the plan uses for things other than services. */
const RESERVED_NAMES = new Set<string>(["Web", "ScoreDatabase", "ServerImage", "ServerImageRepository", ...SECRET_NAMES]);

/** "us-east-1" → "UsEast1", "music-eu" → "MusicEu". */
export function pascalCase(name: string): string {
  return name
    .split("-")
    .filter((p) => p.length > 0)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join("");
}

/** The AWS region a topology group runs in. */
export function cloudRegion(group: Pick<GroupSpec, "region">, defaultRegion = DEFAULT_REGION): string {
  return group.region === "local" ? defaultRegion : group.region;
}

/**
 * Maps a topology to what runs in the cloud: one ECS service per process group in the group's
 * region and zone, the shared load balancer per region, the call edges and their URLs, the
 * score database and the web client's configuration. Pure: no I/O, same input → same plan.
 */
export function planDeployment(topology: Topology, options: PlanOptions): DeploymentPlan {
  const { stage, domain } = options;
  if (!STAGE_RE.test(stage)) throw new PlanError(`stage "${stage}" must match [a-z][a-z0-9-]*`);
  if (!DOMAIN_RE.test(domain)) throw new PlanError(`domain "${domain}" is not a lower-case DNS name`);
  const defaultRegion = options.defaultRegion ?? DEFAULT_REGION;
  if (!REGION_RE.test(defaultRegion)) throw new PlanError(`default region "${defaultRegion}" is not an AWS region name`);
  const homeRegion = options.homeRegion ?? defaultRegion;
  if (!REGION_RE.test(homeRegion)) throw new PlanError(`home region "${homeRegion}" is not an AWS region name`);
  const topologyName = options.topologyName ?? topology.name;
  if (options.image !== undefined && !IMAGE_RE.test(options.image)) {
    throw new PlanError(`image "${options.image}" is not <registry>/<repository>:<tag> or <registry>/<repository>@sha256:<digest>`);
  }
  const warnings: string[] = [];

  // Placement of each group.
  interface Placed {
    readonly spec: GroupSpec;
    readonly name: string;
    readonly region: string;
    readonly zone: string;
  }
  const placed: Placed[] = [];
  const names = new Set<string>();
  for (const spec of topology.groups) {
    const region = cloudRegion(spec, defaultRegion);
    if (!REGION_RE.test(region)) {
      throw new PlanError(`group "${spec.name}": region "${region}" is not an AWS region name (or "local")`);
    }
    if (!ZONE_RE.test(spec.zone)) throw new PlanError(`group "${spec.name}": zone "${spec.zone}" must be one letter (a, b, c, …)`);
    const name = pascalCase(spec.name);
    if (RESERVED_NAMES.has(name) || /^(Aws|Vpc|Cluster|Alb|Cert)[A-Z0-9]/.test(name)) throw new PlanError(`group "${spec.name}": its service name ${name} is reserved`);
    if (names.has(name)) throw new PlanError(`group "${spec.name}": service name ${name} is used by another group`);
    if (REGION_RE.test(spec.name)) {
      throw new PlanError(`group "${spec.name}": the name would clash with a load balancer's host name`);
    }
    names.add(name);
    placed.push({ spec, name, region, zone: spec.zone });
  }
  /** Every group that runs a component, in file order (several only for the engine's shards). */
  const placesOf = (c: ComponentName): Placed[] => {
    const ps = placed.filter((p) => p.spec.components.includes(c));
    if (ps.length === 0) throw new PlanError(`topology ${topology.name} does not place ${c}`);
    return ps;
  };
  const placeOf = (c: ComponentName): Placed => placesOf(c)[0]!;
  const engines = placesOf("engine");
  const sharded = engines.length > 1;
  if (sharded) {
    // One snapshot store per deployment, reached inside its region's VPC only.
    const initiator = placeOf("initiator");
    const regionsUsed = new Set([...engines, initiator].map((p) => p.region));
    if (regionsUsed.size > 1) {
      throw new PlanError(
        `topology ${topology.name} runs ${engines.length} engines: they and the initiator share one snapshot store, so they must be in one region (found ${[...regionsUsed].join(", ")})`,
      );
    }
  }
  /** Index of a group among the groups of its component (0 unless the component is sharded). */
  const shardIndex = (p: Placed, c: ComponentName): number => placesOf(c).indexOf(p);

  // Regions in order of first appearance, each with its zones (padded to two).
  const regionNames = [...new Set(placed.map((p) => p.region))];
  const regionZones = new Map<string, string[]>();
  for (const region of regionNames) {
    const letters = [...new Set(placed.filter((p) => p.region === region).map((p) => p.zone))].sort();
    for (const pad of ["a", "b", "c"]) if (letters.length < 2 && !letters.includes(pad)) letters.push(pad);
    regionZones.set(region, letters.sort());
  }

  const host = (label: string): string => `${label}.${stage}.${domain}`;
  const privateHostOf = (p: Placed): string => `${p.name}.${stage}.${APP_NAME}.${CLOUD_MAP_NAMESPACE}`.toLowerCase();
  const privateUrlOf = (p: Placed): string => `http://${privateHostOf(p)}:${CONNECT_PORT}`;
  const publicUrlOf = (p: Placed): string => `https://${host(p.spec.name)}`;

  // Calls between groups.
  const edges: CallEdgePlan[] = [];
  for (const from of placed) {
    for (const caller of from.spec.components) {
      for (const callee of CALL_GRAPH[caller]) for (const to of placesOf(callee)) {
        if (to === from) continue;
        const crossRegion = to.region !== from.region;
        const network = topology.edges.get(`${caller}->${callee}`) ?? topology.network;
        const rtt = crossRegion ? regionRttMs(from.region, to.region) : undefined;
        edges.push({
          caller,
          callee,
          from: from.name,
          to: to.name,
          crossRegion,
          crossZone: !crossRegion && to.zone !== from.zone,
          url: crossRegion ? publicUrlOf(to) : privateUrlOf(to),
          network,
          ...(rtt === undefined ? {} : { rttMs: rtt }),
        });
        if (crossRegion && network.protocol === "grpc") {
          warnings.push(
            `${caller}->${callee} is gRPC across regions; the load balancer forwards HTTP/1.1 to targets, so use connect or grpc-web on that edge`,
          );
        }
      }
    }
  }

  // Public routes on each region's shared load balancer.
  const routesOf = new Map<string, AlbRoute[]>();
  for (const p of placed) {
    const routes: AlbRoute[] = [];
    for (const c of p.spec.components) {
      const idx = COMPONENT_NAMES.indexOf(c);
      const calledFromElsewhere = edges.some((e) => e.callee === c && e.crossRegion);
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
      if (calledFromElsewhere) {
        // Components in other regions reach internal methods through the public listener; only
        // requests with the components' caller header get past the refusals below. The header is
        // a filter, not the gate: the runtime still requires a component credential.
        internalPaths(c).forEach((path, k) => {
          routes.push(
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
        });
      }
      const stream = streamPathPattern(c);
      if (stream !== undefined) {
        // Engine shards share the stream path: each matches its own host name, at its own priority.
        const shard = placesOf(c).length > 1 ? shardIndex(p, c) : undefined;
        const base = 100 + idx * 10 + 5 + (shard === undefined ? 0 : 1000 * (shard + 1));
        const onHost = shard === undefined ? {} : { host: host(p.spec.name) };
        // Two links share the path: the WebTransport link's WebSocket mapping (its subprotocols) goes
        // to the stream server; the plain WebSocket link, one priority later, to the Connect host.
        routes.push(
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
        );
      }
    }
    routesOf.set(p.name, routes);
  }

  const regions: RegionPlan[] = regionNames.map((region) => {
    const key = pascalCase(region);
    const inRegion = placed.filter((p) => p.region === region);
    const routes = inRegion.flatMap((p) => routesOf.get(p.name) ?? []);
    const publicGroups = inRegion.filter((p) => (routesOf.get(p.name) ?? []).length > 0);
    const lbHost = host(region);
    const refusals: AlbRefusal[] = COMPONENT_NAMES.flatMap((c) =>
      internalPaths(c).map((path, k) => ({
        path,
        component: c,
        priority: 50 + COMPONENT_NAMES.indexOf(c) * 5 + k,
        conditions: [{ pathPattern: { values: [path] } }],
      })),
    );
    const rules: ListenerRulePlan[] = [
      ...refusals.map((r) => ({ priority: r.priority, conditions: r.conditions, action: { type: "refuse" as const, status: 403 as const } })),
      ...routes.map((r) => ({ priority: r.priority, conditions: r.conditions, action: { type: "forward" as const, service: r.service, port: r.forward } })),
    ].sort((a, b) => a.priority - b.priority);
    if (routes.length > 0) {
      const problems = listenerRuleProblems(rules);
      if (problems.length > 0) throw new PlanError(`the ${region} load balancer's listener rules would be refused: ${problems.join("; ")}`);
    }
    return {
      region,
      key,
      providerName: `Aws${key}`,
      vpcName: `Vpc${key}`,
      clusterName: `Cluster${key}`,
      availabilityZones: regionZones.get(region)!.map((z) => `${region}${z}`),
      services: inRegion.map((p) => p.name),
      ...(routes.length === 0
        ? {}
        : {
            loadBalancer: {
              name: `Alb${key}`,
              host: lbHost,
              aliases: publicGroups.map((p) => host(p.spec.name)),
              certificate: { name: `Cert${key}`, domainName: `*.${stage}.${domain}` },
              url: `https://${lbHost}`,
              routes,
              refusals,
              rules,
              idleTimeoutS: ALB_IDLE_TIMEOUT_S,
            },
          }),
    };
  });

  const scorePlace = placeOf("score");
  const databases: DatabasePlan[] = [
    {
      name: "ScoreDatabase",
      engine: "postgres",
      component: "score",
      service: scorePlace.name,
      region: scorePlace.region,
      instance: "t4g.micro",
      storage: "20 GB",
      env: ENV.scoreDatabaseUrl,
    },
  ];

  const snapshotStores: SnapshotStorePlan[] = sharded
    ? [
        {
          name: "SnapshotStore",
          region: engines[0]!.region,
          engine: "valkey",
          instance: "t4g.micro",
          services: [...engines, placeOf("initiator")].map((p) => p.name),
          env: ENV.snapshotStore,
        },
      ]
    : [];

  const streamUrlOf = (p: Placed): string | undefined =>
    p.spec.components.some((c) => STREAM_PATHS[c] !== undefined) ? publicUrlOf(p) : undefined;

  const bare: ServicePlan[] = placed.map((p) => {
    const zones = regionZones.get(p.region)!;
    const albRoutes = routesOf.get(p.name) ?? [];
    const hasPublicConnect = albRoutes.some((r) => r.kind === "connect");
    const streamUrl = streamUrlOf(p);
    const size = options.sizes?.[p.spec.name] ?? options.size ?? taskSizeFor(p.spec.components);
    checkSize(size, p.spec.name);

    const environment: Record<string, string> = {
      [ENV.topology]: topologyName,
      [ENV.group]: p.spec.name,
      [ENV.dataDir]: DATA_DIR,
      [ENV.region]: p.region,
      [ENV.zone]: `${p.region}${p.zone}`,
      [ENV.idleTimeout]: String(SERVER_IDLE_TIMEOUT_MS),
      ...BEHIND_BALANCER_ENV,
      // Only groups with a stream server (engine or music) read it.
      ...(streamUrl === undefined ? {} : { [ENV.streamIdleTimeout]: String(STREAM_IDLE_TIMEOUT_MS) }),
    };
    // The engine's small young generation (the image's command has no flags of its own).
    const nodeFlags = nodeFlagsFor(p.spec.components);
    if (nodeFlags.length > 0) environment["NODE_OPTIONS"] = nodeFlags.join(" ");
    const collector = options.tracing === "xray" ? collectorPlan(stage, p.spec.name, p.region) : undefined;
    if (collector) Object.assign(environment, collector.serverEnvironment);
    const deployEnvironment: Record<string, DeployValue> = {
      [ENV.jwtPublicKey]: { from: "secret", name: "JwtPublicKey", sensitive: false },
      ...componentKeysEnvironment(p.spec.components),
    };
    if (p.spec.components.includes("auth")) {
      deployEnvironment[ENV.jwtPrivateKey] = { from: "secret", name: "JwtPrivateKey", sensitive: true };
    }
    for (const db of databases) {
      if (db.service === p.name) deployEnvironment[db.env] = { from: "database", name: db.name, sensitive: true };
    }
    for (const store of snapshotStores) {
      if (store.services.includes(p.name)) deployEnvironment[store.env] = { from: "snapshot-store", name: store.name, sensitive: true };
    }

    return {
      name: p.name,
      group: p.spec.name,
      components: p.spec.components,
      region: p.region,
      zone: p.zone,
      availabilityZone: `${p.region}${p.zone}`,
      subnetIndex: zones.indexOf(p.zone),
      size,
      privateHost: privateHostOf(p),
      privateUrl: privateUrlOf(p),
      publicHost: host(p.spec.name),
      ...(hasPublicConnect ? { publicUrl: publicUrlOf(p) } : {}),
      ...(streamUrl === undefined ? {} : { streamUrl }),
      albRoutes,
      deployment: p.spec.components.some((c) => SINGLE_COPY_COMPONENTS.includes(c))
        ? { minimumHealthyPercent: 0, maximumPercent: 100, deregistrationDelayS: DEREGISTRATION_DELAY_S, gapS: replacementGapS() }
        : { minimumHealthyPercent: 100, maximumPercent: 200, deregistrationDelayS: DEREGISTRATION_DELAY_S },
      logGroupPrefix: logGroupPrefix(stage, p.spec.name),
      environment,
      deployEnvironment,
      ...(collector ? { collector } : {}),
    };
  });

  // The process-local view each server needs: the same topology with cloud addresses.
  const services: ServicePlan[] = bare.map((s) => ({
    ...s,
    environment: { ...s.environment, [ENV.topologyJson]: JSON.stringify(cloudTopology(topology, bare, s, { stage, domain })) },
  }));

  const urlOf = (c: ComponentName): string => {
    const s = services.find((x) => x.components.includes(c))!;
    return s.publicUrl!;
  };
  const webHost = host("web");
  const web: WebPlan = {
    name: "Web",
    host: webHost,
    url: `https://${webHost}`,
    region: homeRegion,
    config: {
      authUrl: urlOf("auth"),
      initiatorUrl: urlOf("initiator"),
      scoreUrl: urlOf("score"),
      topology: topology.name,
      // No native HTTP/3 in the cloud: the load balancers carry the WebSocket links only.
      http3: false,
    },
  };

  const imageCommon = { platform: "linux/arm64", dockerfile: "apps/server/Dockerfile" } as const;
  const image: ImagePlan =
    options.image === undefined
      ? {
          ...imageCommon,
          build: {
            repositoryComponent: "ServerImageRepository",
            imageComponent: "ServerImage",
            repository: `${APP_NAME}-${stage}-server`,
            region: homeRegion,
            tag: "server",
            cacheTag: "server-cache",
          },
          builds: 1,
          buildS: { ...IMAGE_BUILD_S },
        }
      : { ...imageCommon, prebuilt: options.image, builds: 0, buildS: { min: 0, max: 0 } };

  return {
    app: APP_NAME,
    stage,
    topology: topology.name,
    domain,
    homeRegion,
    regions,
    services,
    edges,
    databases,
    snapshotStores,
    web,
    image,
    warnings,
  };
}

/**
 * Seconds without a task when ECS replaces a single-copy service: the old target's deregistration
 * delay, then the new task's start, then healthyThreshold checks intervalS apart.
 */
export function replacementGapS(): { min: number; max: number } {
  const after = DEREGISTRATION_DELAY_S + TARGET_HEALTH.healthyThreshold * TARGET_HEALTH.intervalS;
  return { min: after + FARGATE_TASK_START_S.min, max: after + FARGATE_TASK_START_S.max };
}

/** Name prefix of the CloudWatch log groups of a group's tasks; `logGroupPrefix(stage)` covers the whole stage. */
export function logGroupPrefix(stage: string, group?: string): string {
  return group === undefined ? `/flaplab/${stage}/` : `/flaplab/${stage}/${group}/`;
}

function checkSize(size: TaskSize, group: string): void {
  const allowed = FARGATE_SIZES[size.cpu] as readonly string[] | undefined;
  if (!allowed) throw new PlanError(`group "${group}": cpu "${size.cpu}" is not a Fargate size`);
  if (!allowed.includes(size.memory)) {
    throw new PlanError(`group "${group}": ${size.cpu} allows ${allowed.join(", ")}, not ${size.memory}`);
  }
}

/**
 * The topology as one service sees it in the cloud, in the topology-file format: its own group
 * listens on all interfaces at the container ports; groups in the same region are reached at
 * their Cloud Map names; groups in other regions at their public host names (port 443).
 */
export function cloudTopology(
  topology: Topology,
  services: readonly ServicePlan[],
  self: ServicePlan,
  hosts: { readonly stage: string; readonly domain: string },
): Record<string, unknown> {
  const groups: Record<string, unknown> = {};
  for (const s of services) {
    const spec = topology.groups.find((g) => g.name === s.group)!;
    const own = s === self;
    const sameRegion = s.region === self.region;
    const dialHost = sameRegion ? s.privateHost : s.publicHost;
    groups[s.group] = {
      components: s.components,
      region: s.region,
      zone: s.zone,
      address: own ? `0.0.0.0:${CONNECT_PORT}` : `${dialHost}:${sameRegion ? CONNECT_PORT : 443}`,
      streamAddress: own ? `0.0.0.0:${STREAM_PORT}` : `${dialHost}:${STREAM_PORT}`,
      // Same region: plain HTTP to the Cloud Map name; other regions: the authenticated public https endpoint.
      callUrl: own || sameRegion ? `http://${dialHost}:${CONNECT_PORT}` : `https://${s.publicHost}`,
      // Browsers reach a group with any public route (Connect, or the streams and the plain WebSocket
      // link) at its own host; the rest only inside the VPC.
      publicUrl: s.albRoutes.length > 0 ? `https://${s.publicHost}` : s.privateUrl,
      streamPublicUrl: s.streamUrl ?? `https://${s.publicHost}`,
      inProcess: spec.inProcess,
    };
  }
  const webHost = `web.${hosts.stage}.${hosts.domain}`;
  return {
    name: topology.name,
    description: `${topology.name} in the cloud (stage ${hosts.stage}), as seen by group ${self.group}`,
    network: topology.network,
    edges: Object.fromEntries(topology.edges),
    groups,
    browser: topology.browser,
    web: { address: `${webHost}:443`, publicUrl: `https://${webHost}/` },
  };
}

/** A route with its listener conditions: the path, then the header, then the host, one field per condition. */
function route(r: Omit<AlbRoute, "conditions">): AlbRoute {
  const conditions: ListenerCondition[] = [{ pathPattern: { values: [r.path] } }];
  if (r.header) conditions.push({ httpHeader: { httpHeaderName: r.header.name, values: [...r.header.values] } });
  if (r.host) conditions.push({ hostHeader: { values: [r.host] } });
  return { ...r, conditions };
}

/**
 * The keys a service of `components` gets, and no other: the private key of each component it
 * runs; the public key of each component that calls one of them (the call graph's edges in); the
 * stream-ticket key's private half where the initiator or the engine runs (they sign tickets),
 * its public half where only music runs (it admits streams with them).
 */
export function componentKeysEnvironment(components: readonly ComponentName[]): Record<string, DeployValue> {
  const env: Record<string, DeployValue> = {};
  for (const c of components) env[componentKeyEnv(c)] = { from: "secret", name: COMPONENT_KEY_SECRETS[c], sensitive: true };
  const callers = COMPONENT_NAMES.filter((caller) => !components.includes(caller) && CALL_GRAPH[caller].some((callee) => components.includes(callee)));
  for (const c of callers) env[componentPublicKeyEnv(c)] = { from: "public-half", name: COMPONENT_KEY_SECRETS[c], sensitive: false };
  if (components.includes("initiator") || components.includes("engine")) {
    env[ENV.ticketPrivateKey] = { from: "secret", name: "StreamTicketKey", sensitive: true };
  } else if (components.includes("music")) {
    env[ENV.ticketPublicKey] = { from: "public-half", name: "StreamTicketKey", sensitive: false };
  }
  return env;
}
