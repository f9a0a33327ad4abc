/// <reference path="./.sst/platform/config.d.ts" />

// FlapLab in AWS. Each stage deploys the topology file of the same name (monolith, microservices,
// multiaz, multiregion); where things run comes from infra/ (planDeployment), and this file only
// turns that plan into resources. See infra/README.md.
//
// Environment: FLAPLAB_DOMAIN (required: a Route 53 hosted zone; HTTPS listeners need a domain),
// FLAPLAB_DEFAULT_REGION (region for "local" groups, the web site and SST's state; us-east-1),
// FLAPLAB_IMAGE (the server image, linux/arm64, built and pushed by infra/build-image.sh; without it
// the deploy builds apps/server/Dockerfile once itself and pushes it to the stage's ECR repository),
// FLAPLAB_TRACING ("xray": an ADOT collector beside every server sends its traces to X-Ray; "off").
// Secrets (per stage, Ed25519 PEM, `sst secret set`): JwtPrivateKey and JwtPublicKey (the players'
// tokens), one key per component (AuthKey, WorldgenKey, EngineKey, InitiatorKey, MusicKey, ScoreKey)
// and StreamTicketKey. Each service gets only the private keys of its own components.

const DEFAULT_REGION = process.env.FLAPLAB_DEFAULT_REGION ?? "us-east-1";

export default $config({
  app() {
    return {
      name: "flaplab",
      home: "aws",
      removal: "remove",
      // docker-build: the server image's one build per deploy (the global `dockerbuild`). The same
      // version SST 4.17.1's own components use; `sst install` refuses an older one than SST's.
      providers: { aws: { region: DEFAULT_REGION }, "docker-build": "0.0.14" },
    };
  },
  async run() {
    const infra = await import("./infra/src/index.js");
    const domain = process.env.FLAPLAB_DOMAIN;
    if (!domain) {
      throw new Error("Set FLAPLAB_DOMAIN to a Route 53 hosted zone: the HTTPS load balancers and the web site need a domain.");
    }
    const stage = $app.stage;
    const topology = await infra.loadStageTopology(stage, `${$cli.paths.root}/topologies`);
    const plan = infra.planDeployment(topology, {
      stage,
      domain,
      defaultRegion: DEFAULT_REGION,
      homeRegion: DEFAULT_REGION,
      topologyName: stage,
      tracing: infra.parseTracing(process.env.FLAPLAB_TRACING),
      ...(process.env.FLAPLAB_IMAGE ? { image: process.env.FLAPLAB_IMAGE } : {}),
      load: { tasks: process.env.FLAPLAB_LOAD_TASKS, args: process.env.FLAPLAB_LOAD_ARGS },
    });
    for (const warning of plan.warnings) console.warn(`flaplab: ${warning}`);

    const secrets = Object.fromEntries(infra.SECRET_NAMES.map((name) => [name, new sst.Secret(name)])) as Record<
      (typeof infra.SECRET_NAMES)[number],
      sst.Secret
    >;
    const outputs: Record<string, $util.Input<string>> = {};
    // One image for every service of every region: FLAPLAB_IMAGE, or built here once. (Given a
    // build context instead, each sst.aws.Service builds the image itself, once per service.)
    const image = plan.image.build ? buildServerImage(plan.image.build) : plan.image.prebuilt;

    for (const region of plan.regions) {
      // One explicit provider per region; every resource of the region is created with it.
      const provider = new aws.Provider(region.providerName, { region: region.region });
      const opts = { provider };
      // Public subnets only (no NAT): tasks get public IPs; the load balancer and RDS need two zones.
      const vpc = new sst.aws.Vpc(region.vpcName, { az: [...region.availabilityZones] }, opts);
      const cluster = new sst.aws.Cluster(region.clusterName, { vpc }, opts);

      const lbPlan = region.loadBalancer;
      const cert = lbPlan ? wildcardCertificate(lbPlan.certificate, opts) : undefined;
      const alb = lbPlan
        ? new sst.aws.Alb(
            lbPlan.name,
            {
              vpc,
              // DNS records for the region's host and its groups' hosts; the certificate is the region's wildcard.
              domain: { name: lbPlan.host, aliases: [...lbPlan.aliases], cert: cert! },
              listeners: [{ port: 443, protocol: "https" }],
              transform: {
                // A quiet WebSocket stream lives as long as the engine keeps its game; the tasks'
                // keep-alive (FLAPLAB_IDLE_TIMEOUT_MS) is longer still, so the balancer closes first.
                loadBalancer: (args) => {
                  args.idleTimeout = lbPlan.idleTimeoutS;
                },
              },
            },
            opts,
          )
        : undefined;
      if (alb && lbPlan) {
        outputs[lbPlan.name] = alb.url;
        // Internal methods are for components only: refused here, before any public route. Callers
        // in other regions get through on the services' own rules (lower priority numbers).
        const listener = alb.getListener("https", 443);
        for (const r of lbPlan.refusals) {
          new aws.lb.ListenerRule(
            `${lbPlan.name}Refuse${r.priority}`,
            {
              listenerArn: listener.arn,
              priority: r.priority,
              actions: [
                {
                  type: "fixed-response",
                  fixedResponse: {
                    statusCode: "403",
                    contentType: "application/json",
                    // A Connect error body: Connect clients report permission_denied with this message.
                    messageBody: JSON.stringify({ code: "permission_denied", message: `${r.path} is internal: only components may call it` }),
                  },
                },
              ],
              conditions: listenerConditions(r.conditions),
            },
            opts,
          );
        }
      }

      const databaseUrls = new Map<string, $util.Output<string>>();
      for (const db of plan.databases.filter((d) => d.region === region.region)) {
        const pg = new sst.aws.Postgres(db.name, { vpc, instance: db.instance, storage: db.storage }, opts);
        databaseUrls.set(
          db.name,
          $interpolate`postgres://${pg.username}:${pg.password.apply(encodeURIComponent)}@${pg.host}:${pg.port}/${pg.database}?sslmode=require`,
        );
      }

      // Several engines: one Valkey node (cluster mode off, TLS, a password) for their game snapshots
      // and heartbeats, reached inside the VPC by the engines and the initiator.
      const storeUrls = new Map<string, $util.Output<string>>();
      for (const store of plan.snapshotStores.filter((x) => x.region === region.region)) {
        const redis = new sst.aws.Redis(store.name, { vpc, engine: store.engine, instance: store.instance, cluster: false }, opts);
        // A deployed (not dev) Redis always has its generated auth token.
        const password = $output(redis.password).apply((p) => encodeURIComponent(p ?? ""));
        storeUrls.set(store.name, $interpolate`rediss://${redis.username}:${password}@${redis.host}:${redis.port}`);
      }

      for (const serviceName of region.services) {
        const s = plan.services.find((x) => x.name === serviceName)!;

        // Plain values go into the task definition; sensitive ones into SSM SecureString parameters.
        const environment: Record<string, $util.Input<string>> = { ...s.environment };
        const ssm: Record<string, $util.Input<string>> = {};
        for (const [key, v] of Object.entries(s.deployEnvironment)) {
          let value: $util.Input<string>;
          if (v.from === "secret") {
            value = secrets[v.name].value;
          } else if (v.from === "public-half") {
            // A component's public key, for the services it calls: derived from its secret here.
            value = secrets[v.name].value.apply(infra.publicKeyPemOf);
          } else {
            const url = (v.from === "database" ? databaseUrls : storeUrls).get(v.name);
            if (!url) throw new Error(`${s.name}: ${v.from} ${v.name} is not in ${region.region}`);
            value = url;
          }
          if (v.sensitive) {
            ssm[key] = new aws.ssm.Parameter(`${s.name}Env${v.name}`, { type: "SecureString", value }, opts).arn;
          } else {
            environment[key] = value;
          }
        }

        const service = new sst.aws.Service(
          s.name,
          {
            cluster,
            image,
            architecture: infra.TASK_ARCHITECTURE,
            cpu: s.size.cpu,
            memory: s.size.memory,
            environment,
            ssm,
            // stdout (pino logs and the call log, `msg: "rpc"`) to CloudWatch; `fetch-logs` reads it back.
            logging: { retention: "3 months" },
            // The trace collector (FLAPLAB_TRACING=xray) writes to X-Ray with the task's role.
            ...(s.collector
              ? { permissions: s.collector.permissions.map((p) => ({ actions: [...p.actions], resources: [...p.resources] })) }
              : {}),
            ...(alb && s.albRoutes.length > 0
              ? {
                  loadBalancer: {
                    instance: alb,
                    rules: s.albRoutes.map((r) => ({
                      listen: "443/https" as const,
                      forward: r.forward,
                      // SST puts path and header into one condition object, which AWS refuses: the
                      // listenerRule transform below replaces these with the plan's conditions.
                      conditions: { path: r.path },
                      priority: r.priority,
                    })),
                  },
                }
              : {}),
            transform: {
              // Each rule gets the plan's conditions, one field per condition: the path, the header
              // (the caller header of cross-region internal calls; the WebTransport subprotocol of the
              // stream link) and an engine shard's host name. SST names the rule …P<priority>.
              listenerRule: (args, _opts, name) => {
                const route = s.albRoutes.find((r) => name.endsWith(`P${r.priority}`));
                if (!route) throw new Error(`${s.name}: listener rule ${name} is not in the plan`);
                args.conditions = listenerConditions(route.conditions);
                return undefined;
              },
              // Pin the task to the topology's zone: the public subnet of that availability zone.
              service: (args) => {
                // Engine and music: the old task stops before the new one starts, so two copies never hold games at once.
                args.deploymentMinimumHealthyPercent = s.deployment.minimumHealthyPercent;
                args.deploymentMaximumPercent = s.deployment.maximumPercent;
                // Each task is pinned to one zone's subnet: nothing to rebalance, and ECS must not move a task holding games.
                args.availabilityZoneRebalancing = "DISABLED";
                args.networkConfiguration = {
                  assignPublicIp: true,
                  subnets: [vpc.publicSubnets.apply((ids) => ids[s.subnetIndex]!)],
                  securityGroups: vpc.securityGroups,
                };
              },
              // A log group that outlives `sst remove` (study data); the name prefix lets a later deploy create a new one.
              logGroup: (args, logOpts) => {
                args.name = undefined;
                args.namePrefix = s.logGroupPrefix;
                logOpts.retainOnDelete = true;
              },
              // Both target groups check the task on the Connect port (the stream server answers only
              // WebTransport/WebSocket requests), every 5 s, healthy after 2; a stopped task drains 5 s, not 300.
              target: (args) => {
                const h = infra.TARGET_HEALTH;
                args.healthCheck = {
                  protocol: "HTTP",
                  port: String(infra.CONNECT_PORT),
                  path: h.path,
                  matcher: "200",
                  interval: h.intervalS,
                  timeout: h.timeoutS,
                  healthyThreshold: h.healthyThreshold,
                  unhealthyThreshold: h.unhealthyThreshold,
                };
                args.deregistrationDelay = s.deployment.deregistrationDelayS;
              },
              ...(s.collector
                ? {
                    taskDefinition: (args) => {
                      args.containerDefinitions = $output(args.containerDefinitions).apply((json) => {
                        const defs = JSON.parse(json) as Record<string, unknown>[];
                        const server = defs[0]!;
                        if (s.collector) {
                          // The collector beside the server: its lines in the server's log group under their own
                          // stream prefix, up before the server starts sending spans to it.
                          const log = server.logConfiguration as { logDriver: string; options: Record<string, string> };
                          defs.push({
                            ...s.collector.container,
                            logConfiguration: { ...log, options: { ...log.options, "awslogs-stream-prefix": "/collector" } },
                          });
                          server.dependsOn = [{ containerName: infra.COLLECTOR_CONTAINER, condition: "START" }];
                        }
                        return JSON.stringify(defs);
                      });
                    },
                  }
                : {}),
            },
          },
          opts,
        );

        // The plan computed the Cloud Map name SST gives the service; fail loudly if they differ.
        outputs[`${s.name}Private`] = service.service.apply((host) => {
          if (host.toLowerCase() !== s.privateHost) {
            throw new Error(`${s.name}: Cloud Map name ${host} differs from the planned ${s.privateHost}`);
          }
          return host;
        });
        // The subnet picked by index must be the planned availability zone.
        vpc.nodes.publicSubnets.apply((subnets) =>
          subnets[s.subnetIndex]!.availabilityZone.apply((az) => {
            if (az !== s.availabilityZone) throw new Error(`${s.name}: subnet ${s.subnetIndex} is in ${az}, not ${s.availabilityZone}`);
          }),
        );
        if (s.publicUrl) outputs[s.name] = s.publicUrl;
      }

      // Bot players (FLAPLAB_LOAD_TASKS; none by default): `pnpm load` tasks with no load balancer,
      // playing against the stage's public URLs from this region. A task whose run ends is started again.
      for (const lg of plan.loadGenerators.filter((x) => x.region === region.region)) {
        new sst.aws.Service(
          lg.name,
          {
            cluster,
            image,
            architecture: infra.TASK_ARCHITECTURE,
            cpu: lg.size.cpu,
            memory: lg.size.memory,
            command: [...lg.command],
            scaling: { min: lg.tasks, max: lg.tasks },
            logging: { retention: "1 month" },
            transform: {
              service: (args) => {
                args.networkConfiguration = { assignPublicIp: true, subnets: vpc.publicSubnets, securityGroups: vpc.securityGroups };
              },
            },
          },
          opts,
        );
      }
    }

    // The web client, with the /config.json the plan computed (vite validates it while building).
    const web = new sst.aws.StaticSite(plan.web.name, {
      path: "apps/web",
      build: {
        command: `pnpm run build && node -e "require('node:fs').writeFileSync('dist/config.json', process.env.FLAPLAB_WEB_CONFIG)"`,
        output: "dist",
      },
      environment: { FLAPLAB_WEB_CONFIG: JSON.stringify(plan.web.config) },
      domain: plan.web.host,
      edge: {
        viewerResponse: {
          // Cross-origin isolation gives the page 5 µs timers instead of 100 µs.
          injection: [
            `event.response.headers["cross-origin-opener-policy"] = { value: "same-origin" };`,
            `event.response.headers["cross-origin-embedder-policy"] = { value: "require-corp" };`,
          ].join("\n"),
        },
      },
    });

    return { web: web.url, topology: plan.topology, regions: plan.regions.map((r) => r.region).join(","), ...outputs };

    /**
     * Builds the server image once (BuildKit, for Fargate's platform), pushes it to the stage's ECR
     * repository in the home region (the app's provider) and returns it by digest, as SST's Service
     * does with its own builds. A deploy whose build context and settings are unchanged builds
     * nothing; a changed one reuses BuildKit's cache from the repository for the steps before the change.
     */
    function buildServerImage(build: import("./infra/src/index.js").ImageBuildPlan): $util.Output<string> {
      const repository = new aws.ecr.Repository(build.repositoryComponent, { name: build.repository, forceDelete: true });
      const token = aws.ecr.getAuthorizationTokenOutput({ registryId: repository.registryId });
      const cache = $interpolate`${repository.repositoryUrl}:${build.cacheTag}`;
      const built = new dockerbuild.Image(build.imageComponent, {
        context: { location: $cli.paths.root },
        dockerfile: { location: `${$cli.paths.root}/${plan.image.dockerfile}` },
        platforms: [plan.image.platform],
        tags: [$interpolate`${repository.repositoryUrl}:${build.tag}`],
        push: true,
        registries: [{ address: token.proxyEndpoint, username: token.userName, password: $util.secret(token.password) }],
        cacheFrom: [{ registry: { ref: cache } }],
        cacheTo: [{ registry: { ref: cache, imageManifest: true, ociMediaTypes: true, mode: "max" } }],
        // As for SST's own builds: BUILDX_BUILDER picks the builder (e.g. a native arm64 one).
        ...(process.env.BUILDX_BUILDER ? { builder: { name: process.env.BUILDX_BUILDER } } : {}),
      });
      return $interpolate`${repository.repositoryUrl}@${built.digest}`;
    }

    /**
     * A DNS-validated ACM certificate for `*.<stage>.<domain>` in one region. ACM asks for the same
     * validation record in every region, so each region writes it with allowOverwrite.
     */
    function wildcardCertificate(plan: { name: string; domainName: string }, opts: { provider: aws.Provider }) {
      const certificate = new aws.acm.Certificate(plan.name, { domainName: plan.domainName, validationMethod: "DNS" }, opts);
      const zone = aws.route53.getZoneOutput({ name: domain }, opts);
      const option = certificate.domainValidationOptions.apply((o) => o[0]!);
      const record = new aws.route53.Record(
        `${plan.name}Validation`,
        {
          zoneId: zone.zoneId,
          name: option.resourceRecordName,
          type: option.resourceRecordType,
          records: [option.resourceRecordValue],
          ttl: 60,
          allowOverwrite: true,
        },
        opts,
      );
      return new aws.acm.CertificateValidation(`${plan.name}Validated`, { certificateArn: certificate.arn, validationRecordFqdns: [record.fqdn] }, opts).certificateArn;
    }

    /** The plan's listener conditions as the AWS provider takes them (mutable copies). */
    function listenerConditions(conditions: readonly import("./infra/src/index.js").ListenerCondition[]): aws.types.input.lb.ListenerRuleCondition[] {
      return conditions.map((c) =>
        "pathPattern" in c
          ? { pathPattern: { values: [...c.pathPattern.values] } }
          : "httpHeader" in c
            ? { httpHeader: { httpHeaderName: c.httpHeader.httpHeaderName, values: [...c.httpHeader.values] } }
            : { hostHeader: { values: [...c.hostHeader.values] } },
      );
    }
  },
});
