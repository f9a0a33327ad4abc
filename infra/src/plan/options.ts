import type { Topology } from "@flaplab/runtime";
import type { TracingBackend } from "../tracing.js";
import { DEFAULT_REGION } from "./constants.js";
import { IMAGE_RE } from "./image.js";
import type { TaskSize } from "./task-size.js";
import { PlanError } from "./types.js";

// What a plan is asked for, checked, with every default filled in.

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
  /**
   * Load generators (FLAPLAB_LOAD_TASKS: `N` per region or `us-east-1=2,eu-west-1=1`; default none)
   * and their `pnpm load` options (FLAPLAB_LOAD_ARGS).
   */
  readonly load?: { readonly tasks?: string; readonly args?: string };
}

const STAGE_RE = /^[a-z][a-z0-9-]*$/;
const DOMAIN_RE = /^(?=.{1,200}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
/** An AWS region name, e.g. us-east-1. */
export const REGION_RE = /^[a-z]{2}(-gov)?-[a-z]+-\d$/;

/** PlanOptions checked, with the defaults filled in. */
export interface ResolvedOptions {
  readonly stage: string;
  readonly domain: string;
  readonly defaultRegion: string;
  readonly homeRegion: string;
  readonly topologyName: string;
  readonly size: TaskSize | undefined;
  readonly sizes: Readonly<Record<string, TaskSize>> | undefined;
  readonly tracing: TracingBackend | undefined;
  readonly image: string | undefined;
  readonly load: { readonly tasks?: string; readonly args?: string };
}

/** Checks the options' names (stage, domain, regions, image) and fills in the defaults; throws PlanError. */
export function resolveOptions(topology: Topology, options: PlanOptions): ResolvedOptions {
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
  return {
    stage,
    domain,
    defaultRegion,
    homeRegion,
    topologyName,
    size: options.size,
    sizes: options.sizes,
    tracing: options.tracing,
    image: options.image,
    load: options.load ?? {},
  };
}
