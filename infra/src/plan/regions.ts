import { COMPONENT_NAMES } from "@flaplab/component";
import { internalPaths } from "../calls.js";
import { listenerRuleProblems } from "../listener-limits.js";
import { ALB_IDLE_TIMEOUT_S } from "./constants.js";
import { pascalCase, publicHost, type StageNames } from "./naming.js";
import { groupsIn, type Placement, regionNames, regionZones } from "./placement.js";
import { type AlbRefusal, type AlbRoute, type ListenerRulePlan, type LoadBalancerPlan, PlanError, type RegionPlan } from "./types.js";

// Each region's provider, VPC, cluster and shared HTTPS load balancer.

/** One plan per region used, in order of first appearance. */
export function planRegions(placement: Placement, routesOf: ReadonlyMap<string, readonly AlbRoute[]>, names: StageNames): RegionPlan[] {
  return regionNames(placement).map((region) => {
    const key = pascalCase(region);
    const inRegion = groupsIn(placement, region);
    const routes = inRegion.flatMap((p) => routesOf.get(p.name) ?? []);
    const publicGroups = inRegion.filter((p) => (routesOf.get(p.name) ?? []).length > 0);
    return {
      region,
      key,
      providerName: `Aws${key}`,
      vpcName: `Vpc${key}`,
      clusterName: `Cluster${key}`,
      availabilityZones: regionZones(placement, region).map((z) => `${region}${z}`),
      services: inRegion.map((p) => p.name),
      ...(routes.length === 0
        ? {}
        : { loadBalancer: planLoadBalancer(region, key, routes, publicGroups.map((p) => publicHost(names, p.spec.name)), names) }),
    };
  });
}

/** A region's load balancer, its certificate and the rules of its 443 listener; refuses rules AWS would refuse. */
function planLoadBalancer(region: string, key: string, routes: readonly AlbRoute[], aliases: readonly string[], names: StageNames): LoadBalancerPlan {
  const lbHost = publicHost(names, region);
  const refusals = internalRefusals();
  const rules = listenerRules(refusals, routes);
  const problems = listenerRuleProblems(rules);
  if (problems.length > 0) throw new PlanError(`the ${region} load balancer's listener rules would be refused: ${problems.join("; ")}`);
  return {
    name: `Alb${key}`,
    host: lbHost,
    aliases,
    certificate: { name: `Cert${key}`, domainName: `*.${names.stage}.${names.domain}` },
    url: `https://${lbHost}`,
    routes,
    refusals,
    rules,
    idleTimeoutS: ALB_IDLE_TIMEOUT_S,
  };
}

/** A fixed 403 for every internal method of every component, wherever it runs. */
function internalRefusals(): AlbRefusal[] {
  return COMPONENT_NAMES.flatMap((c) =>
    internalPaths(c).map((path, k) => ({
      path,
      component: c,
      priority: 50 + COMPONENT_NAMES.indexOf(c) * 5 + k,
      conditions: [{ pathPattern: { values: [path] } }],
    })),
  );
}

/** Every rule of the listener, refusals and routes, by priority. */
function listenerRules(refusals: readonly AlbRefusal[], routes: readonly AlbRoute[]): ListenerRulePlan[] {
  return [
    ...refusals.map((r) => ({ priority: r.priority, conditions: r.conditions, action: { type: "refuse" as const, status: 403 as const } })),
    ...routes.map((r) => ({ priority: r.priority, conditions: r.conditions, action: { type: "forward" as const, service: r.service, port: r.forward } })),
  ].sort((a, b) => a.priority - b.priority);
}
