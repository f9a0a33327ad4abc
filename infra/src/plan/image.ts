import { APP_NAME } from "./constants.js";

// The server image every service runs: a prebuilt one, or one build by the deploy.

/**
 * Seconds one build of apps/server/Dockerfile takes on 2 vCPUs, partly estimated: 268 s measured
 * for every step but the base image's own (apps/server/test/image-build.slow.test.ts: pnpm fetch
 * 5 s, install, turbo build and production install 242 s, copying 21 s), plus apt-get and pulling
 * the base image (≈ 30–60 s, not measured here). Pushing the image (≈ 0.3 GB) and BuildKit's cache
 * to ECR is not included (not measured here). An arm64 build on an x86 machine runs under
 * emulation, several times slower: build on an arm64 runner.
 */
export const IMAGE_BUILD_S = { min: 300, max: 330 } as const;
/** `<registry>/<repository>:<tag>` or `<registry>/<repository>@sha256:<digest>`. */
export const IMAGE_RE = /^[a-z0-9][a-z0-9.-]*(:\d+)?\/[a-z0-9._/-]+(:[A-Za-z0-9_.-]{1,128}|@sha256:[a-f0-9]{64})$/;

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

/** The image every service runs: `prebuilt` when given, else the deploy's one build into the stage's repository in the home region. */
export function planImage(prebuilt: string | undefined, stage: string, homeRegion: string): ImagePlan {
  const imageCommon = { platform: "linux/arm64", dockerfile: "apps/server/Dockerfile" } as const;
  return prebuilt === undefined
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
    : { ...imageCommon, prebuilt, builds: 0, buildS: { min: 0, max: 0 } };
}
