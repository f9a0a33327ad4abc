import { type Deployment, type DeploymentEvent, startDeployment } from "@flaplab/deployment";

/** A copy of a repository topology on free loopback ports (see @flaplab/deployment). */
export { repositoryTopologyOnFreePorts as topologyOnFreePorts } from "@flaplab/deployment";

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
  options: { readonly proxyBrowserLinks?: boolean; readonly tlsBetweenRegions?: boolean } = {},
): Promise<RunningDeployment> {
  const deployment = await startDeployment(topology, { dataDir, web: "build", ...(onEvent ? { onEvent } : {}), ...options });
  await deployment.ready;
  return deployment as RunningDeployment;
}
