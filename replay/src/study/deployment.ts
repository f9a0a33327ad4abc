import { join } from "node:path";
import { type Deployment, type DeploymentEvent, startDeployment, TOPOLOGIES_DIR } from "@flaplab/deployment";
import { topologyOnFreePorts as copyOnFreePorts } from "@flaplab/ports";

/**
 * A copy of the repository topology `name` in a new temporary folder, with every address (and the
 * web client's) on a free loopback port, so a deployment can run beside `pnpm dev`.
 */
export async function topologyOnFreePorts(name: string): Promise<{ dir: string; file: string }> {
  const { dir, file } = await copyOnFreePorts(join(TOPOLOGIES_DIR, `${name}.json`));
  return { dir, file };
}

/** A deployment that is up, with its web client. */
export type RunningDeployment = Deployment & { readonly webUrl: string };

/**
 * Starts `topology` (a name or a file) with latency emulation where it places groups in regions,
 * and waits until it is up. The web client is a production build, so editing sources while a study
 * runs neither reloads the page mid-game nor changes what is measured.
 */
export async function startStudyDeployment(
  topology: string,
  dataDir: string,
  onEvent?: (event: DeploymentEvent) => void,
): Promise<RunningDeployment> {
  const deployment = await startDeployment(topology, { dataDir, web: "build", ...(onEvent ? { onEvent } : {}) });
  await deployment.ready;
  return deployment as RunningDeployment;
}
