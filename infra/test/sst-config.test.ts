// Runs sst.config.ts's run() against stand-ins for SST's globals and records what it would create.
// This checks the config's own logic offline (providers, regions, environment, zones, transforms);
// whether AWS accepts the result can only be seen in a real deploy.
import { createPublicKey } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ComponentName } from "@flaplab/component";
import { loadTopology } from "@flaplab/runtime";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  ADOT_COLLECTOR_IMAGE,
  ALB_IDLE_TIMEOUT_S,
  COLLECTOR_CONTAINER,
  OTLP_HTTP_PORT,
  CALLER_HEADER,
  componentKeyEnv,
  ENV,
  internalPaths,
  planDeployment,
  SERVER_IDLE_TIMEOUT_MS,
  stageTopology,
  type DeploymentPlan,
} from "../src/index.js";
import {
  awsListenerRules,
  created,
  DOMAIN,
  FakeOutput,
  FakeSecret,
  installGlobals,
  loadConfig,
  ofType,
  ROOT,
  resolved,
  run,
  secretKeyPem,
  STAND_IN_ACCOUNT,
  STAND_IN_DIGEST,
  type SstConfig,
  setCloudMapName,
  unwrap,
} from "./sst-stand-ins.js";

async function plan(stage: string): Promise<DeploymentPlan> {
  return planDeployment(await loadTopology(stageTopology(stage)), { stage, domain: DOMAIN, topologyName: stage });
}

let config: SstConfig;
beforeAll(async () => {
  config = await loadConfig();
});
afterEach(() => {
  setCloudMapName();
});

describe("sst.config.ts", () => {
  it("is one app, flaplab, with its state and web site in the default region", () => {
    const app = config.app();
    expect(app).toMatchObject({ name: "flaplab", home: "aws", providers: { aws: { region: "us-east-1" } } });
    // The provider of the image's one build: pinned (SST asks for a version) to the version SST's own components use.
    expect(app.providers["docker-build"]).toBe("0.0.14");
  });

  it("refuses to run without FLAPLAB_DOMAIN", async () => {
    installGlobals("monolith");
    const saved = process.env["FLAPLAB_DOMAIN"];
    delete process.env["FLAPLAB_DOMAIN"];
    await expect(config.run()).rejects.toThrow(/FLAPLAB_DOMAIN/);
    if (saved !== undefined) process.env["FLAPLAB_DOMAIN"] = saved;
  });

  it("creates one provider, VPC and cluster per region and every regional resource with that region's provider", async () => {
    await run("multiregion");
    const p = await plan("multiregion");
    const providers = ofType("aws.Provider");
    expect(providers.map((c) => (c.args as { region: string }).region).sort()).toEqual(p.regions.map((r) => r.region).sort());
    expect(ofType("sst.aws.Vpc")).toHaveLength(p.regions.length);
    expect(ofType("sst.aws.Cluster")).toHaveLength(p.regions.length);
    for (const c of created) {
      // (Listener rules SST's Services create are children of the service, recorded without options.)
      if (c.type === "sst.aws.Service:ListenerRule") continue;
      // The server image's repository and build are the home region's, on the app's own provider.
      if (["aws.Provider", "sst.Secret", "sst.aws.StaticSite", "aws.ecr.Repository", "dockerbuild.Image"].includes(c.type)) {
        expect(c.opts?.provider, `${c.type} ${c.name}`).toBeUndefined();
      } else {
        expect(c.opts?.provider, `${c.type} ${c.name}`).toBeDefined();
      }
    }
    for (const s of p.services) {
      const svc = ofType("sst.aws.Service").find((c) => c.name === s.name)!;
      expect(svc.opts!.provider!.args.region).toBe(s.region);
    }
    const db = ofType("sst.aws.Postgres");
    expect(db).toHaveLength(1);
    expect(db[0]!.opts!.provider!.args.region).toBe("sa-east-1");
  });

  it("gives each service the plan's environment, the public key in plain text and secrets through SSM", async () => {
    await run("microservices");
    const p = await plan("microservices");
    const params = ofType("aws.ssm.Parameter");
    for (const s of p.services) {
      const args = ofType("sst.aws.Service").find((c) => c.name === s.name)!.args as {
        environment: Record<string, unknown>;
        ssm: Record<string, unknown>;
        image: unknown;
        architecture: string;
        cpu: string;
        memory: string;
      };
      expect(unwrap(args.image)).toBe(`${STAND_IN_ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/flaplab-microservices-server@${STAND_IN_DIGEST}`);
      expect(args.architecture).toBe("arm64");
      expect([args.cpu, args.memory]).toEqual([s.size.cpu, s.size.memory]);
      for (const [k, v] of Object.entries(s.environment)) expect(args.environment[k], k).toBe(v);
      expect(unwrap(args.environment[ENV.jwtPublicKey])).toBe("<secret JwtPublicKey>");
      expect(args.environment[ENV.jwtPrivateKey]).toBeUndefined();
      const ssmKeys = Object.keys(args.ssm).sort();
      // In microservices each group runs one component: its own key, and the ticket key where it signs tickets.
      const expected = [
        ...(s.group === "auth" ? [ENV.jwtPrivateKey] : []),
        ...(s.group === "score" ? [ENV.scoreDatabaseUrl] : []),
        componentKeyEnv(s.group as ComponentName),
        ...(s.group === "engine" || s.group === "initiator" ? [ENV.ticketPrivateKey] : []),
      ].sort();
      expect(ssmKeys, s.group).toEqual(expected);
      expect(Object.keys(args.environment).filter((k) => k.includes("PRIVATE") || k.startsWith("FLAPLAB_COMPONENT_KEY_")), s.group).toEqual([]);
      // The public keys of its callers, derived from their secrets, in plain text.
      for (const [k, v] of Object.entries(s.deployEnvironment)) {
        if (v.from !== "public-half") continue;
        expect(unwrap(args.environment[k]), `${s.group} ${k}`).toBe(createPublicKey(secretKeyPem(v.name)).export({ format: "pem", type: "spki" }).toString());
      }
    }
    const dbParam = params.find((c) => c.name === "ScoreEnvScoreDatabase")!;
    expect(unwrap(dbParam.args["value"])).toBe(
      "postgres://postgres:p%40ss%2Fword@ScoreDatabase.rds:5432/flaplab?sslmode=require",
    );
    expect(dbParam.args["type"]).toBe("SecureString");
  });

  it("attaches public routes to the region's load balancer and pins each task to its zone's subnet", async () => {
    await run("multiaz");
    const p = await plan("multiaz");
    const alb = ofType("sst.aws.Alb")[0]!;
    expect(alb.args["domain"]).toMatchObject({ name: p.regions[0]!.loadBalancer!.host, aliases: p.regions[0]!.loadBalancer!.aliases });
    for (const s of p.services) {
      const args = ofType("sst.aws.Service").find((c) => c.name === s.name)!.args as {
        loadBalancer?: { rules: { listen: string; forward: string; conditions: { path: string }; priority: number }[] };
        transform: {
          service: (a: Record<string, unknown>) => void;
          target: (a: Record<string, unknown>) => void;
        };
      };
      expect((args.loadBalancer?.rules ?? []).map((r) => r.conditions.path)).toEqual(s.albRoutes.map((r) => r.path));
      const serviceArgs: Record<string, unknown> = {};
      args.transform.service(serviceArgs);
      const net = serviceArgs["networkConfiguration"] as { subnets: unknown[]; assignPublicIp: boolean };
      expect(net.assignPublicIp).toBe(true);
      expect(unwrap(net.subnets[0])).toBe(`subnet-VpcUsEast1-${s.subnetIndex}`);
      // What SST 4.17.1 gives a target group without health settings: ELB's 30 s interval, 5 checks, and no deregistration delay (300 s).
      for (const port of [8443, 8080]) {
        const target: Record<string, unknown> = { port, healthCheck: { path: "/", interval: 30, timeout: 5, healthyThreshold: 5, unhealthyThreshold: 2, matcher: "200" } };
        args.transform.target(target);
        expect(target["healthCheck"], `${s.name} ${port}`).toEqual({
          protocol: "HTTP",
          port: "8080",
          path: "/healthz",
          matcher: "200",
          interval: 5,
          timeout: 2,
          healthyThreshold: 2,
          unhealthyThreshold: 2,
        });
        expect(target["deregistrationDelay"]).toBe(5);
      }
    }
    expect(ofType("sst.aws.Service").find((c) => c.name === "Worldgen")!.args["loadBalancer"]).toBeUndefined();
  });

  it("gives each region's load balancer one wildcard certificate that covers every host on it, however many groups", async () => {
    for (const stage of ["multiregion", "microservices-sharded"]) {
      await run(stage);
      const certs = ofType("aws.acm.Certificate");
      const albs = ofType("sst.aws.Alb");
      expect(certs).toHaveLength(albs.length);
      for (const alb of albs) {
        const domain = alb.args["domain"] as { name: string; aliases: string[]; cert: unknown };
        const validated = String(unwrap(domain.cert));
        const cert = certs.find((c) => validated === `arn:acm:${c.name}`)!;
        expect(cert.args).toEqual({ domainName: `*.${stage}.${DOMAIN}`, validationMethod: "DNS" });
        expect(cert.opts!.provider).toBe(alb.opts!.provider);
        // A wildcard covers exactly one label: every host on the balancer is <label>.<stage>.<domain>.
        for (const host of [domain.name, ...domain.aliases]) expect(host, alb.name).toMatch(new RegExp(`^[a-z0-9-]+\\.${stage}\\.${DOMAIN.replaceAll(".", "\\.")}$`));
      }
      // ACM asks every region for the same validation record: each writes it, overwriting.
      for (const r of ofType("aws.route53.Record").filter((x) => x.name.endsWith("Validation"))) expect(r.args["allowOverwrite"]).toBe(true);
    }
  });

  it("builds the web site with the plan's /config.json", async () => {
    await run("multiregion");
    const p = await plan("multiregion");
    const site = ofType("sst.aws.StaticSite")[0]!;
    expect(site.args["path"]).toBe("apps/web");
    expect(site.args["domain"]).toBe(p.web.host);
    expect(JSON.parse((site.args["environment"] as Record<string, string>)["FLAPLAB_WEB_CONFIG"]!)).toEqual(p.web.config);
  });

  it("offers no native HTTP/3: no network load balancer, no UDP port, whatever FLAPLAB_HTTP3_GROUPS says", async () => {
    await run("microservices", { FLAPLAB_HTTP3_GROUPS: "engine" });
    expect(ofType("aws.lb.LoadBalancer")).toHaveLength(0);
    expect(ofType("aws.lb.Listener")).toHaveLength(0);
    const engine = ofType("sst.aws.Service").find((c) => c.name === "Engine")!.args as { transform: { taskDefinition?: unknown } };
    expect(engine.transform.taskDefinition).toBeUndefined();
  });

  it("runs every service on arm64 from one prebuilt image when FLAPLAB_IMAGE names it, and builds nothing", async () => {
    const image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/flaplab-server:0123456789ab";
    await run("multiregion", { FLAPLAB_IMAGE: image });
    expect(ofType("sst.aws.Service")).toHaveLength(6);
    for (const svc of ofType("sst.aws.Service")) {
      expect([svc.args["image"], svc.args["architecture"]], svc.name).toEqual([image, "arm64"]);
    }
    expect(ofType("dockerbuild.Image")).toHaveLength(0);
    expect(ofType("aws.ecr.Repository")).toHaveLength(0);
    const p = planDeployment(await loadTopology(stageTopology("multiregion")), { stage: "multiregion", domain: DOMAIN, image });
    expect(p.image).toMatchObject({ prebuilt: image, builds: 0, buildS: { min: 0, max: 0 } });
    expect(p.image.build).toBeUndefined();
    await expect(run("monolith", { FLAPLAB_IMAGE: "flaplab-server" })).rejects.toThrow(/is not <registry>\/<repository>:<tag>/);
  });

  it("without FLAPLAB_IMAGE builds the image once per deploy, in the home region, and runs every service of every region from it by digest", async () => {
    await run("multiregion");
    const p = await plan("multiregion");
    expect(new Set(p.services.map((s) => s.region)).size).toBe(5);
    const repositories = ofType("aws.ecr.Repository");
    const images = ofType("dockerbuild.Image");
    expect(repositories).toHaveLength(1);
    expect(images).toHaveLength(1);
    const repository = repositories[0]!;
    expect(repository.name).toBe("ServerImageRepository");
    // A stage's own repository, emptied and deleted by `sst remove`; not infra/build-image.sh's flaplab-server.
    expect(repository.args).toEqual({ name: "flaplab-multiregion-server", forceDelete: true });
    // The app's provider: the home region, where SST keeps its state.
    expect(repository.opts?.provider).toBeUndefined();
    expect(p.image.build?.region).toBe(config.app().providers.aws.region);
    const url = String(unwrap(repository.self["repositoryUrl"]));

    const build = images[0]!;
    expect(build.name).toBe("ServerImage");
    expect(build.opts?.provider).toBeUndefined();
    const args = resolved(build.args) as {
      context: { location: string };
      dockerfile: { location: string };
      platforms: string[];
      tags: string[];
      push: boolean;
      registries: { address: string; username: string; password: string }[];
      cacheFrom: { registry: { ref: string } }[];
      cacheTo: { registry: { ref: string; imageManifest: boolean; ociMediaTypes: boolean; mode: string } }[];
      builder?: unknown;
    };
    // The build SST's Service would run for `{ context: ".", dockerfile: "apps/server/Dockerfile" }`, for Fargate's arm64.
    expect(args.context.location).toBe(ROOT);
    expect(args.dockerfile.location).toBe(join(ROOT, "apps/server/Dockerfile"));
    expect(existsSync(args.dockerfile.location)).toBe(true);
    expect(args.platforms).toEqual(["linux/arm64"]);
    expect([args.push, args.tags]).toEqual([true, [`${url}:server`]]);
    expect(args.registries).toEqual([{ address: `https://${STAND_IN_ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com`, username: "AWS", password: "<ecr token>" }]);
    expect((build.args["registries"] as { password: unknown }[])[0]!.password).toBeInstanceOf(FakeSecret);
    expect(args.cacheFrom).toEqual([{ registry: { ref: `${url}:server-cache` } }]);
    expect(args.cacheTo).toEqual([{ registry: { ref: `${url}:server-cache`, imageManifest: true, ociMediaTypes: true, mode: "max" } }]);
    expect(args.builder).toBeUndefined();

    const services = ofType("sst.aws.Service");
    expect(services).toHaveLength(p.services.length);
    for (const svc of services) {
      expect([unwrap(svc.args["image"]), svc.args["architecture"]], svc.name).toEqual([`${url}@${STAND_IN_DIGEST}`, "arm64"]);
    }
    expect(p.image).toMatchObject({ builds: 1, buildS: { min: 300, max: 330 } });
    expect(p.warnings.some((w) => w.includes("FLAPLAB_IMAGE"))).toBe(false);
  });

  it("passes BUILDX_BUILDER on to the build, as SST's own builds do", async () => {
    await run("monolith", { BUILDX_BUILDER: "arm64-native" });
    expect(ofType("dockerbuild.Image")[0]!.args["builder"]).toEqual({ name: "arm64-native" });
  });

  it("fails if SST names a service's Cloud Map host differently from the plan", async () => {
    const outputs = await run("microservices");
    expect(unwrap(outputs["EnginePrivate"])).toBe("Engine.microservices.flaplab.sst");
    setCloudMapName((name) => `${name}.elsewhere.sst`);
    await expect(run("microservices")).rejects.toThrow(/differs from the planned/);
  });

  it("sets the load balancers' idle timeout below the tasks' keep-alive", async () => {
    for (const stage of ["monolith", "multiregion"]) {
      await run(stage);
      const albs = ofType("sst.aws.Alb");
      expect(albs.length).toBeGreaterThan(0);
      for (const alb of albs) {
        const lbArgs: Record<string, unknown> = {};
        (alb.args["transform"] as { loadBalancer: (a: Record<string, unknown>) => void }).loadBalancer(lbArgs);
        expect(lbArgs["idleTimeout"]).toBe(ALB_IDLE_TIMEOUT_S);
      }
      for (const svc of ofType("sst.aws.Service")) {
        const env = svc.args["environment"] as Record<string, string>;
        expect(Number(env[ENV.idleTimeout]) / 1000, svc.name).toBeGreaterThan(ALB_IDLE_TIMEOUT_S);
        expect(Number(env[ENV.idleTimeout])).toBe(SERVER_IDLE_TIMEOUT_MS);
      }
    }
  });

  it("refuses internal methods with a fixed 403 on every region's 443 listener", async () => {
    await run("multiregion");
    const p = await plan("multiregion");
    const rules = ofType("aws.lb.ListenerRule");
    const paths = ["StartGame", "HandleInput", "ResumeGame"].map((m) => `/flaplab.engine.v1.EngineService/${m}`).concat(
      "/flaplab.music.v1.MusicService/PlayMusic",
      "/flaplab.score.v1.ScoreService/RecordRun",
      "/flaplab.worldgen.v1.WorldGenService/GenerateWorld",
    );
    for (const region of p.regions.filter((r) => r.loadBalancer)) {
      const lbName = region.loadBalancer!.name;
      const mine = rules.filter((r) => r.args["listenerArn"] instanceof FakeOutput && unwrap(r.args["listenerArn"]) === `arn:listener:${lbName}:https443`);
      const refused = mine.map((r) => (r.args["conditions"] as { pathPattern: { values: string[] } }[])[0]!.pathPattern.values[0]);
      expect(refused.sort(), lbName).toEqual([...paths].sort());
      for (const r of mine) {
        expect(r.opts!.provider!.args.region).toBe(region.region);
        expect(r.args["actions"]).toEqual([
          expect.objectContaining({ type: "fixed-response", fixedResponse: expect.objectContaining({ statusCode: "403" }) }),
        ]);
        const body = JSON.parse((r.args["actions"] as { fixedResponse: { messageBody: string } }[])[0]!.fixedResponse.messageBody);
        expect(body.code).toBe("permission_denied");
        // Before every route the services add, except the cross-region internal ones (caller header).
        for (const route of region.loadBalancer!.routes) {
          if (route.kind === "internal") expect(route.priority).toBeLessThan(r.args["priority"] as number);
          else expect(route.priority).toBeGreaterThan(r.args["priority"] as number);
        }
      }
    }
  });

  it("gives several engines one Valkey snapshot store, named to the engines and the initiator through SSM", async () => {
    await run("microservices-sharded");
    const stores = ofType("sst.aws.Redis");
    expect(stores.map((r) => [r.name, r.args["engine"], r.args["cluster"], r.opts!.provider!.args.region])).toEqual([["SnapshotStore", "valkey", false, "us-east-1"]]);
    const url = "rediss://default:t0k%2Fen%2B@master.SnapshotStore.cache.amazonaws.com:6379";
    const params = ofType("aws.ssm.Parameter").filter((x) => x.name.endsWith("EnvSnapshotStore"));
    expect(params.map((x) => x.name).sort()).toEqual(["Engine1EnvSnapshotStore", "Engine2EnvSnapshotStore", "Engine3EnvSnapshotStore", "InitiatorEnvSnapshotStore"]);
    for (const x of params) expect(unwrap(x.args["value"])).toBe(url);
    for (const svc of ofType("sst.aws.Service")) {
      const ssm = svc.args["ssm"] as Record<string, unknown>;
      const uses = /^(Engine\d|Initiator)$/.test(svc.name);
      expect(ssm[ENV.snapshotStore] !== undefined, svc.name).toBe(uses);
    }
    await run("microservices");
    expect(ofType("sst.aws.Redis")).toEqual([]);
  });

  it("gives each of a service's listener rules the plan's conditions: path, header and an engine shard's host, one field each", async () => {
    await run("microservices-sharded");
    const p = await plan("microservices-sharded");
    for (const name of ["Engine1", "Engine2", "Engine3"]) {
      const svc = ofType("sst.aws.Service").find((x) => x.name === name)!;
      const route = p.services.find((x) => x.name === name)!.albRoutes.find((r) => r.kind === "stream")!;
      const transform = (svc.args["transform"] as { listenerRule: (args: Record<string, unknown>, opts: unknown, name: string) => undefined }).listenerRule;
      // What SST 4.17.1 hands the transform for a rule with conditions { path }.
      const args: Record<string, unknown> = { conditions: [{ pathPattern: { values: [route.path] }, queryStrings: undefined, httpHeader: undefined }] };
      transform(args, {}, `${name}AlbRuleHTTPS443P${route.priority}`);
      expect(unwrap(args["conditions"])).toEqual([
        { pathPattern: { values: [route.path] } },
        { httpHeader: { httpHeaderName: "sec-websocket-protocol", values: ["webtransport_*"] } },
        { hostHeader: { values: [route.host] } },
      ]);
      // A rule the plan does not have is an error, not a rule left as SST made it.
      expect(() => transform({ conditions: [] }, {}, `${name}AlbRuleHTTPS443P1`)).toThrow(/not in the plan/);
    }
  });

  it("lets cross-region callers through on the service's rules only with the caller header", async () => {
    await run("multiregion");
    const recordRun = awsListenerRules().find((r) => r.action.startsWith("forward Score:") && JSON.stringify(r.conditions).includes(internalPaths("score")[0]!));
    expect(recordRun).toMatchObject({
      action: "forward Score:8080/http",
      conditions: [{ pathPattern: { values: [internalPaths("score")[0]] } }, { httpHeader: { httpHeaderName: CALLER_HEADER, values: ["*"] } }],
    });
    // In one region nobody goes through the listener for an internal method.
    await run("microservices");
    const withCaller = awsListenerRules().filter((r) => JSON.stringify(r.conditions).includes(CALLER_HEADER));
    expect(withCaller).toEqual([]);
  });

  it("replaces engine and music within about a minute: 5 s of draining, the task's start, 2 health checks 5 s apart", async () => {
    const p = await plan("microservices");
    const engine = p.services.find((x) => x.group === "engine")!;
    // ELB's defaults (300 s draining, 5 checks 30 s apart) left 480–510 s.
    expect(engine.deployment.gapS).toEqual({ min: 5 + 30 + 10, max: 5 + 60 + 10 });
    expect(p.services.find((x) => x.group === "auth")!.deployment.gapS).toBeUndefined();
  });

  it("stops engine and music before starting their replacement; other services roll over", async () => {
    await run("microservices");
    for (const svc of ofType("sst.aws.Service")) {
      const serviceArgs: Record<string, unknown> = {};
      (svc.args["transform"] as { service: (a: Record<string, unknown>) => void }).service(serviceArgs);
      const single = svc.name === "Engine" || svc.name === "Music";
      expect([serviceArgs["deploymentMinimumHealthyPercent"], serviceArgs["deploymentMaximumPercent"]], svc.name).toEqual(
        single ? [0, 100] : [100, 200],
      );
      expect(serviceArgs["availabilityZoneRebalancing"]).toBe("DISABLED");
    }
  });

  it("keeps each service's stdout in a CloudWatch log group that outlives the stage", async () => {
    await run("multiregion");
    for (const svc of ofType("sst.aws.Service")) {
      expect(svc.args["logging"]).toEqual({ retention: "3 months" });
      const group = (await plan("multiregion")).services.find((s) => s.name === svc.name)!.group;
      const logArgs: Record<string, unknown> = { name: "/sst/cluster/x/y/z", retentionInDays: 90 };
      const logOpts: Record<string, unknown> = {};
      (svc.args["transform"] as { logGroup: (a: Record<string, unknown>, o: Record<string, unknown>) => void }).logGroup(logArgs, logOpts);
      expect(logArgs).toEqual({ name: undefined, namePrefix: `/flaplab/multiregion/${group}/`, retentionInDays: 90 });
      expect(logOpts["retainOnDelete"]).toBe(true);
    }
  });

  it("with FLAPLAB_TRACING=xray, runs an ADOT collector beside every server, which sends its OTLP spans to X-Ray", async () => {
    await run("multiregion");
    for (const svc of ofType("sst.aws.Service")) {
      expect(svc.args["permissions"], svc.name).toBeUndefined();
      expect(Object.keys(svc.args["environment"] as object).filter((k) => k.startsWith("OTEL_"))).toEqual([]);
    }
    await run("multiregion", { FLAPLAB_TRACING: "xray" });
    const services = ofType("sst.aws.Service");
    expect(services).toHaveLength(6);
    for (const svc of services) {
      const planned = (await plan("multiregion")).services.find((s) => s.name === svc.name)!;
      expect(svc.args["environment"], svc.name).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${OTLP_HTTP_PORT}`,
        OTEL_SERVICE_NAME: `flaplab-multiregion-${planned.group}`,
      });
      expect(svc.args["permissions"]).toEqual([{ actions: expect.arrayContaining(["xray:PutTraceSegments", "xray:GetSamplingRules"]), resources: ["*"] }]);
      // The task definition SST writes (one server container with its log configuration) gains the collector.
      const server = { name: svc.name, portMappings: [{ containerPortRange: "1-65535" }], logConfiguration: { logDriver: "awslogs", options: { "awslogs-group": "g", "awslogs-region": planned.region, "awslogs-stream-prefix": "/service" } } };
      const taskArgs: Record<string, unknown> = { containerDefinitions: JSON.stringify([server]) };
      (svc.args["transform"] as { taskDefinition: (a: Record<string, unknown>) => void }).taskDefinition(taskArgs);
      const defs = JSON.parse(unwrap(taskArgs["containerDefinitions"]) as string) as Array<Record<string, unknown>>;
      expect(defs.map((d) => d["name"])).toEqual([svc.name, COLLECTOR_CONTAINER]);
      expect(defs[0]!["dependsOn"]).toEqual([{ containerName: COLLECTOR_CONTAINER, condition: "START" }]);
      expect(defs[1]).toMatchObject({ image: ADOT_COLLECTOR_IMAGE, essential: false, logConfiguration: { logDriver: "awslogs", options: { "awslogs-group": "g", "awslogs-stream-prefix": "/collector" } } });
      // No port mapping: nothing outside the task reaches the collector.
      expect(defs[1]!["portMappings"]).toBeUndefined();
      const config = (defs[1]!["environment"] as Array<{ name: string; value: string }>).find((e) => e.name === "AOT_CONFIG_CONTENT")!.value;
      expect(config).toContain(`endpoint: 127.0.0.1:${OTLP_HTTP_PORT}`);
      expect(config).toContain(`region: ${planned.region}`);
    }
  });

  it("refuses an unknown FLAPLAB_TRACING", async () => {
    await expect(run("microservices", { FLAPLAB_TRACING: "jaeger" })).rejects.toThrow('FLAPLAB_TRACING must be "xray" or "off", got "jaeger"');
  });
});
