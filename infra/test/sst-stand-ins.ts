// Stand-ins for SST's globals (`sst`, `aws`, `$interpolate`, …) that record what sst.config.ts's
// run() would create. The Service stand-in also creates the listener rules SST 4.17.1's Service
// creates for an attached Alb (components/aws/service.ts, createAlbListenerRules: one condition
// object holding the path, query and header), through the service's listenerRule transform,
// recorded as "sst.aws.Service:ListenerRule".
import { generateKeyPairSync } from "node:crypto";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
// Loaded by path: its types come from .sst/platform, which only `sst install` creates (check-sst.sh).
const CONFIG = resolve(ROOT, "sst.config.ts");
export const DOMAIN = "flaplab.example.org";
export const STAND_IN_ACCOUNT = "123456789012";
/** The digest the docker-build Image stand-in reports. */
export const STAND_IN_DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;

const secretKeys = new Map<string, string>();
/** The stand-in value of a key secret: a fresh Ed25519 private key per secret name, PEM. */
export function secretKeyPem(name: string): string {
  let pem = secretKeys.get(name);
  if (pem === undefined) {
    pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    secretKeys.set(name, pem);
  }
  return pem;
}

export class FakeOutput<T> {
  constructor(readonly value: T) {}
  apply<U>(fn: (v: T) => U): FakeOutput<unknown> {
    const r = fn(this.value);
    return r instanceof FakeOutput ? r : new FakeOutput(r);
  }
}
/** A value marked secret ($util.secret). */
export class FakeSecret<T> extends FakeOutput<T> {}
export const unwrap = (v: unknown): unknown => (v instanceof FakeOutput ? unwrap(v.value) : v);
export const out = <T>(v: T): FakeOutput<unknown> => (v instanceof FakeOutput ? v : new FakeOutput(v));

export interface Created {
  readonly type: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly opts: { provider?: { name: string; args: { region: string } } } | undefined;
  readonly self: Record<string, unknown>;
}
export let created: Created[] = [];
const defaultCloudMapName = (name: string, stage: string): string => `${name}.${stage}.flaplab.sst`;
let cloudMapName = defaultCloudMapName;
/** How SST names a service in Cloud Map (the default: as the plan expects); undefined restores the default. */
export function setCloudMapName(fn?: (name: string, stage: string) => string): void {
  cloudMapName = fn ?? defaultCloudMapName;
}

function fake(type: string, extra: (name: string, args: Record<string, unknown>) => Record<string, unknown> = () => ({})) {
  return class {
    [key: string]: unknown;
    constructor(name: string, args: Record<string, unknown> = {}, opts?: Created["opts"]) {
      Object.assign(this, { name, args }, extra(name, args));
      created.push({ type, name, args, opts, self: this });
    }
  };
}

export function installGlobals(stage: string): void {
  const g = globalThis as Record<string, unknown>;
  g["$config"] = (c: unknown) => c;
  g["$app"] = { name: "flaplab", stage };
  g["$cli"] = { paths: { root: ROOT } };
  g["$interpolate"] = (strings: TemplateStringsArray, ...values: unknown[]) =>
    out(strings.reduce((acc, s, i) => acc + s + (i < values.length ? String(unwrap(values[i])) : ""), ""));
  g["$output"] = out;
  g["$util"] = { all: (items: unknown[]) => out(items.map(unwrap)), secret: <T>(v: T) => new FakeSecret(unwrap(v)) };
  g["sst"] = {
    // The players' keys read as a marker; the component and ticket keys as real keys (one per
    // name), whose public halves the config derives.
    Secret: fake("sst.Secret", (name) => ({ value: out(name.startsWith("Jwt") ? `<secret ${name}>` : secretKeyPem(name)) })),
    aws: {
      Vpc: fake("sst.aws.Vpc", (name, args) => {
        const azs = args["az"] as string[];
        return {
          id: out(`vpc-${name}`),
          publicSubnets: out(azs.map((_, i) => `subnet-${name}-${i}`)),
          securityGroups: out([`sg-${name}`]),
          nodes: { publicSubnets: out(azs.map((az) => ({ availabilityZone: out(az) }))) },
        };
      }),
      Cluster: fake("sst.aws.Cluster"),
      Alb: fake("sst.aws.Alb", (name) => ({
        url: out(`https://${name}/`),
        getListener: (protocol: string, port: number) => ({ arn: out(`arn:listener:${name}:${protocol}${port}`) }),
      })),
      Postgres: fake("sst.aws.Postgres", (name) => ({
        username: out("postgres"),
        password: out("p@ss/word"),
        host: out(`${name}.rds`),
        port: out(5432),
        database: out("flaplab"),
      })),
      Redis: fake("sst.aws.Redis", (name) => ({
        username: out("default"),
        password: out("t0k/en+"),
        host: out(`master.${name}.cache.amazonaws.com`),
        port: out(6379),
      })),
      Service: fake("sst.aws.Service", (name, args) => {
        createServiceListenerRules(name, args);
        return { service: out(cloudMapName(name, (g["$app"] as { stage: string }).stage)) };
      }),
      StaticSite: fake("sst.aws.StaticSite", (name) => ({ url: out(`https://${name}/`) })),
    },
  };
  g["dockerbuild"] = { Image: fake("dockerbuild.Image", () => ({ digest: out(STAND_IN_DIGEST) })) };
  g["aws"] = {
    Provider: fake("aws.Provider"),
    ecr: {
      Repository: fake("aws.ecr.Repository", (_name, args) => ({
        registryId: out(STAND_IN_ACCOUNT),
        repositoryUrl: out(`${STAND_IN_ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/${String(args["name"])}`),
      })),
      getAuthorizationTokenOutput: (args: { registryId: unknown }) => ({
        proxyEndpoint: out(`https://${String(unwrap(args.registryId))}.dkr.ecr.us-east-1.amazonaws.com`),
        userName: out("AWS"),
        password: out("<ecr token>"),
      }),
    },
    ssm: { Parameter: fake("aws.ssm.Parameter", (name) => ({ arn: out(`arn:ssm:${name}`) })) },
    lb: {
      LoadBalancer: fake("aws.lb.LoadBalancer", (name) => ({ arn: out(`arn:nlb:${name}`), dnsName: out(`${name}.elb`), zoneId: out("Z1") })),
      TargetGroup: fake("aws.lb.TargetGroup", (name) => ({ arn: out(`arn:tg:${name}`) })),
      Listener: fake("aws.lb.Listener"),
      ListenerRule: fake("aws.lb.ListenerRule"),
    },
    vpc: { SecurityGroupIngressRule: fake("aws.vpc.SecurityGroupIngressRule") },
    route53: { getZoneOutput: () => ({ zoneId: out("Z123") }), Record: fake("aws.route53.Record", (name) => ({ fqdn: out(`${name}.fqdn`) })) },
    acm: {
      Certificate: fake("aws.acm.Certificate", (name, args) => ({
        arn: out(`arn:acm:${name}`),
        domainValidationOptions: out([{ domainName: args["domainName"], resourceRecordName: "_abc.example.", resourceRecordType: "CNAME", resourceRecordValue: "_xyz.acm-validations.aws." }]),
      })),
      CertificateValidation: fake("aws.acm.CertificateValidation", (_name, args) => ({ certificateArn: args["certificateArn"] })),
    },
  };
}

export interface SstConfig {
  app(): { name: string; home: string; providers: { aws: { region: string }; "docker-build": string } };
  run(): Promise<Record<string, unknown>>;
}
let config: SstConfig;

/** Loads sst.config.ts (once) with the stand-ins installed. */
export async function loadConfig(): Promise<SstConfig> {
  // The config reads these; the tests set what they need.
  for (const key of ["FLAPLAB_DOMAIN", "FLAPLAB_DEFAULT_REGION", "FLAPLAB_TRACING", "FLAPLAB_IMAGE", "BUILDX_BUILDER"]) delete process.env[key];
  installGlobals("monolith");
  config ??= ((await import(CONFIG)) as { default: SstConfig }).default;
  return config;
}

export async function run(stage: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  created = [];
  installGlobals(stage);
  const saved = { ...process.env };
  Object.assign(process.env, { FLAPLAB_DOMAIN: DOMAIN }, env);
  try {
    return await config.run();
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

export const ofType = (type: string): Created[] => created.filter((c) => c.type === type);

interface SstAlbRule {
  readonly listen: string;
  readonly forward: string;
  readonly priority: number;
  readonly conditions?: { readonly path?: string; readonly query?: unknown; readonly header?: { readonly name: string; readonly values: readonly string[] } };
}

/** SST 4.17.1's createAlbListenerRules for a Service attached to a shared Alb, as far as the rule's arguments go. */
function createServiceListenerRules(name: string, args: Record<string, unknown>): void {
  const lb = args["loadBalancer"] as { instance: { getListener(p: string, port: number): { arn: unknown } }; rules: SstAlbRule[] } | undefined;
  if (!lb?.instance) return;
  const transform = (args["transform"] as { listenerRule?: (a: Record<string, unknown>, o: unknown, n: string) => unknown } | undefined)?.listenerRule;
  for (const rule of lb.rules) {
    const [port, protocol] = rule.listen.split("/") as [string, string];
    const ruleName = `${name}AlbRule${protocol.toUpperCase()}${port}P${rule.priority}`;
    const c = rule.conditions ?? {};
    const ruleArgs: Record<string, unknown> = {
      listenerArn: lb.instance.getListener(protocol, Number(port)).arn,
      priority: rule.priority,
      actions: [{ type: "forward", targetGroupArn: out(`arn:tg:${name}${rule.forward}`), forward: rule.forward }],
      conditions: [
        {
          pathPattern: c.path ? { values: [c.path] } : undefined,
          queryStrings: c.query,
          httpHeader: c.header ? out({ httpHeaderName: c.header.name, values: c.header.values }) : undefined,
        },
      ],
    };
    const opts = {};
    transform?.(ruleArgs, opts, ruleName);
    created.push({ type: "sst.aws.Service:ListenerRule", name: ruleName, args: ruleArgs, opts: undefined, self: { service: name } });
  }
}

/** A value with every stand-in Output replaced by what it holds, at any depth. */
export function resolved(v: unknown): unknown {
  const u = unwrap(v);
  if (Array.isArray(u)) return u.map(resolved);
  if (u !== null && typeof u === "object") return Object.fromEntries(Object.entries(u).map(([k, x]) => [k, resolved(x)]));
  return u;
}

/** A listener rule as the AWS provider would get it. */
export interface AwsListenerRule {
  readonly name: string;
  /** The Alb's component name. */
  readonly loadBalancer: string;
  readonly priority: number;
  readonly conditions: readonly Record<string, unknown>[];
  /** "forward <Service>:<port>/<protocol>" or "403". */
  readonly action: string;
}

/** Every listener rule of the last run(): the config's own (fixed 403s) and those SST's Services create. */
export function awsListenerRules(): AwsListenerRule[] {
  return created
    .filter((c) => c.type === "aws.lb.ListenerRule" || c.type === "sst.aws.Service:ListenerRule")
    .map((c) => {
      const listener = String(resolved(c.args["listenerArn"]));
      const action = (resolved(c.args["actions"]) as { type: string; forward?: string; fixedResponse?: { statusCode: string } }[])[0]!;
      return {
        name: c.name,
        loadBalancer: listener.split(":")[2]!,
        priority: resolved(c.args["priority"]) as number,
        conditions: resolved(c.args["conditions"]) as Record<string, unknown>[],
        action: action.type === "forward" ? `forward ${String(c.self["service"])}:${action.forward}` : (action.fixedResponse?.statusCode ?? action.type),
      };
    });
}

/** The host names each Alb of the last run() answers for (its certificate and DNS records): name → aliases included. */
export function albHosts(): Map<string, string[]> {
  return new Map(
    ofType("sst.aws.Alb").map((c) => {
      const domain = resolved(c.args["domain"]) as { name: string; aliases?: string[] };
      return [c.name, [domain.name, ...(domain.aliases ?? [])]];
    }),
  );
}
