import { choice, text } from "@flaplab/settings";

// The cloud's variables: the deploy's own (sst.config.ts, the plan command, build-image.sh) and
// the labels the plan gives each task. The server's variables the plan sets per task are declared
// by the packages that read them.

/** Region of a cloud task (set by the plan). */
export const REGION = text({
  name: "FLAPLAB_REGION",
  format: "AWS region",
  description: "region of a cloud task (set by the deployment plan; a label only)",
  defaultText: "set per task",
  readBy: "infra",
});

/** Zone of a cloud task (set by the plan). */
export const ZONE = text({
  name: "FLAPLAB_ZONE",
  format: "AWS availability zone",
  description: "zone of a cloud task (set by the deployment plan; a label only)",
  defaultText: "set per task",
  readBy: "infra",
});

/** The Route 53 zone of a stage's host names (read by `sst.config.ts` and `bin/plan.ts`). */
export const DOMAIN = text({
  name: "FLAPLAB_DOMAIN",
  format: "DNS zone",
  description: "Route 53 zone for the stage's host names",
  defaultText: "required for deploys (`plan`: `flaplab.example.org`)",
  readBy: "`sst.config.ts`, infra",
});

/** The home region (read by `sst.config.ts`, `bin/fetch-logs.ts` and `build-image.sh`). */
export const DEFAULT_REGION_SETTING = text({
  name: "FLAPLAB_DEFAULT_REGION",
  format: "AWS region",
  description: "region of \"local\" groups, the web site, SST's state and the image's ECR repository",
  defaultText: "`us-east-1`",
  readBy: "`sst.config.ts`, infra, `infra/build-image.sh`",
});

/** The server image every cloud service runs (read by `sst.config.ts` and `bin/plan.ts`). */
export const IMAGE = text({
  name: "FLAPLAB_IMAGE",
  format: "image URI",
  description: "the server image every cloud service runs (linux/arm64, from `infra/build-image.sh`)",
  defaultText: "the deploy builds it once, into the stage's ECR repository",
  readBy: "`sst.config.ts`, infra",
});

/** The ECR repository `build-image.sh` pushes to. */
export const IMAGE_REPOSITORY = text({
  name: "FLAPLAB_IMAGE_REPOSITORY",
  format: "repository name",
  description: "the ECR repository `infra/build-image.sh` pushes the image to",
  defaultText: "`flaplab-server`",
  readBy: "`infra/build-image.sh`",
});

/** Where a stage's traces go (read by `sst.config.ts` through `parseTracing`). */
export const TRACING = choice({
  name: "FLAPLAB_TRACING",
  choices: ["xray", "off"],
  default: "off",
  description: "`xray`: an ADOT collector beside every server sends its traces to X-Ray",
  readBy: "`sst.config.ts`, infra",
});

/** Load generators per region (read by `sst.config.ts` through the plan's `parseLoadRequest`). */
export const LOAD_TASKS = text({
  name: "FLAPLAB_LOAD_TASKS",
  format: "`N` or `<region>=<N>,…`",
  description: "bot players in the cloud: `pnpm load` tasks (1 vCPU each) per region of the stage, all regions (`N`) or those named",
  defaultText: "`0` (none)",
  readBy: "`sst.config.ts`, infra",
});

/** The load generators' `pnpm load` options. */
export const LOAD_ARGS = text({
  name: "FLAPLAB_LOAD_ARGS",
  format: "`pnpm load` options",
  description: "what each load task runs, besides the stage's URLs, which the plan sets (e.g. `--players 200 --duration 10m`)",
  defaultText: "`pnpm load`'s defaults",
  readBy: "`sst.config.ts`, infra",
});

/** Every variable of the cloud deploy. */
export const SETTINGS = [REGION, ZONE, DOMAIN, DEFAULT_REGION_SETTING, IMAGE, IMAGE_REPOSITORY, TRACING, LOAD_TASKS, LOAD_ARGS];
