import type { ComponentName } from "@flaplab/component";
import type { NetworkSettings } from "@flaplab/runtime";
import type { ListenerCondition } from "../listener-limits.js";
import type { CollectorPlan } from "../tracing.js";
import type { CONNECT_PORT, STREAM_PORT } from "./constants.js";
import type { ImagePlan } from "./image.js";
import type { DeployValue } from "./secrets.js";
import type { TaskSize } from "./task-size.js";

// The deployment plan's shape: what planDeployment returns, and the error it throws.

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


/** Bot players (`pnpm load`) in one region: an ECS service with no load balancer, off unless FLAPLAB_LOAD_TASKS asks. */
export interface LoadGeneratorPlan {
  /** SST component and ECS service name (`Load<Region>`). */
  readonly name: string;
  readonly region: string;
  /** Tasks the service keeps running. */
  readonly tasks: number;
  readonly size: TaskSize;
  /** The container's command: the built `pnpm load` against the stage's public URLs. */
  readonly command: readonly string[];
}

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
  /** Load generators per region (none unless asked for). */
  readonly loadGenerators: readonly LoadGeneratorPlan[];
  readonly image: ImagePlan;
  /** Things the plan cannot do for this topology, in words. */
  readonly warnings: readonly string[];
}

export class PlanError extends Error {
  override readonly name = "PlanError";
}
