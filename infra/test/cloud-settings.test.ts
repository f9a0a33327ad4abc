// The plan's cloud settings against the code they must agree with: the host's idle timeout, the
// components' internal methods and proto services, and the engine's idle-game lifetime.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { COMPONENT_NAMES } from "@flaplab/component";
import { CALLER_HEADER as RUNTIME_CALLER_HEADER, loadTopology, type Topology } from "@flaplab/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_HOST_LIMITS, hostLimitsFromEnv } from "../../packages/platform/host/src/config.js";
import { authLimitsFromEnv, DEFAULT_AUTH_LIMITS } from "../../packages/components/auth/src/throttle.js";
import { DEFAULT_STREAM_LIMITS, streamLimitsFromEnv } from "../../packages/game/stream-servers/src/limits.js";
import {
  ALB_IDLE_TIMEOUT_S,
  CALLER_HEADER,
  CONNECT_SERVICES,
  ENV,
  INTERNAL_METHODS,
  internalPaths,
  logGroupPrefix,
  planDeployment,
  SERVER_IDLE_TIMEOUT_MS,
  STREAM_IDLE_TIMEOUT_MS,
  stageTopology,
  type DeploymentPlan,
} from "../src/index.js";

const REPO = resolve(import.meta.dirname, "../..");
// The runtime's outgoing-connection settings (not part of its public exports; loaded by path).
const RUNTIME_CLIENTS = "../../packages/platform/runtime/src/clients.js";
const DOMAIN = "flaplab.example.org";
const STAGES = ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"] as const;
const topologies: Record<string, Topology> = {};

beforeAll(async () => {
  for (const stage of STAGES) topologies[stage] = await loadTopology(stageTopology(stage));
});

const plan = (stage: string): DeploymentPlan => planDeployment(topologies[stage]!, { stage, domain: DOMAIN });

/** ALB path matching: `*` any run of characters, `?` one character, everything else literal. */
function albMatches(pattern: string, path: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".")}$`);
  return re.test(path);
}

interface Rule {
  readonly priority: number;
  readonly path: string;
  readonly header?: string;
  readonly action: string;
}

/** What the region's public listener does with a request: the first matching rule by priority, else SST's default 403. */
function listenerAnswer(rules: readonly Rule[], path: string, headers: readonly string[]): string {
  const hit = [...rules]
    .sort((a, b) => a.priority - b.priority)
    .find((r) => albMatches(r.path, path) && (r.header === undefined || headers.includes(r.header)));
  return hit?.action ?? "default 403";
}

function rulesOf(p: DeploymentPlan, region: string): Rule[] {
  const lb = p.regions.find((r) => r.region === region)!.loadBalancer!;
  return [
    ...lb.routes.map((r) => ({ priority: r.priority, path: r.path, ...(r.header ? { header: r.header.name } : {}), action: `forward ${r.service}:${r.forward}` })),
    ...lb.refusals.map((r) => ({ priority: r.priority, path: r.path, action: "403" })),
  ];
}

describe("idle timeouts", () => {
  it("gives every task a keep-alive longer than its load balancer's idle timeout, in the variable the host reads", () => {
    expect(SERVER_IDLE_TIMEOUT_MS).toBeGreaterThan(ALB_IDLE_TIMEOUT_S * 1000);
    for (const stage of STAGES) {
      const p = plan(stage);
      for (const r of p.regions) if (r.loadBalancer) expect(r.loadBalancer.idleTimeoutS).toBe(ALB_IDLE_TIMEOUT_S);
      for (const s of p.services) {
        // Parsed by the host's own reader: the name and the format are the ones it accepts.
        const limits = hostLimitsFromEnv(s.environment);
        expect(limits.idleTimeoutMs, `${stage}/${s.group}`).toBe(SERVER_IDLE_TIMEOUT_MS);
        expect(limits.idleTimeoutMs! - ALB_IDLE_TIMEOUT_S * 1000).toBeGreaterThanOrEqual(5000);
      }
    }
  });

  it("has the components' own connections to another group end idle before the balancer's idle timeout", async () => {
    // Cross-region calls hold keep-alive connections to the callee's load balancer: the caller should close an idle one first.
    const { CLIENT_IDLE_TIMEOUT_MS } = (await import(RUNTIME_CLIENTS)) as { CLIENT_IDLE_TIMEOUT_MS: number };
    expect(CLIENT_IDLE_TIMEOUT_MS).toBeLessThan(ALB_IDLE_TIMEOUT_S * 1000);
  });

  it("sets the variable in every service, not relying on the host's default", () => {
    const env = plan("monolith").services[0]!.environment;
    expect(env[ENV.idleTimeout]).toBe(String(SERVER_IDLE_TIMEOUT_MS));
    expect(SERVER_IDLE_TIMEOUT_MS).not.toBe(DEFAULT_HOST_LIMITS.idleTimeoutMs);
  });

  it("raises every per-address share to its process-wide cap, since all clients come from the balancer's address", () => {
    for (const stage of STAGES) {
      for (const s of plan(stage).services) {
        const host = hostLimitsFromEnv(s.environment);
        expect(host.maxCallsPerAddress, `${stage}/${s.group}`).toBe(host.maxConnections ?? DEFAULT_HOST_LIMITS.maxConnections);
        const streams = { ...DEFAULT_STREAM_LIMITS, ...streamLimitsFromEnv(s.environment) };
        expect(streams.maxSessionsPerAddress, `${stage}/${s.group}`).toBe(streams.maxSessions);
        const auth = { ...DEFAULT_AUTH_LIMITS, ...authLimitsFromEnv(s.environment) };
        expect(auth.maxHashesPerAddress).toBe(auth.maxConcurrentHashes + auth.maxQueuedHashes);
        expect(auth.loginsPerAddress).toBeGreaterThanOrEqual(100_000);
      }
    }
  });

  it("has the stream server close a quiet stream itself, before the balancer would cut it", () => {
    for (const stage of STAGES) {
      for (const s of plan(stage).services) {
        // Parsed by the stream server's own reader.
        const limits = streamLimitsFromEnv(s.environment);
        const streams = s.components.includes("engine") || s.components.includes("music");
        expect(limits.idleTimeoutMs, `${stage}/${s.group}`).toBe(streams ? STREAM_IDLE_TIMEOUT_MS : undefined);
      }
    }
    expect(STREAM_IDLE_TIMEOUT_MS).toBeLessThanOrEqual(ALB_IDLE_TIMEOUT_S * 1000 - 5000);
  });

  it("leaves room to raise the stream idle timeout up to the engine's lifetime of an untouched game", async () => {
    const source = await readFile(resolve(REPO, "packages/components/engine/src/games.ts"), "utf8");
    const ttl = /this\.idleTtlMs = options\.idleTtlMs \?\? ([\d_]+);/.exec(source);
    expect(ttl, "the engine's default idleTtlMs").not.toBeNull();
    expect(ALB_IDLE_TIMEOUT_S * 1000).toBeGreaterThanOrEqual(Number(ttl![1]!.replaceAll("_", "")));
  });
});

describe("internal methods on the public listeners", () => {
  it("lists each component's internal methods as its definition does, with proto's method names", async () => {
    const sources: Record<string, string> = {
      auth: "packages/components/auth/src/auth.ts",
      worldgen: "packages/components/worldgen/src/service.ts",
      engine: "packages/components/engine/src/engine.ts",
      initiator: "packages/components/initiator/src/initiator.ts",
      music: "packages/components/music/src/music.ts",
      score: "packages/components/score/src/score.ts",
    };
    for (const c of COMPONENT_NAMES) {
      const source = await readFile(resolve(REPO, sources[c]!), "utf8");
      const declared = /internalMethods:\s*\[([^\]]*)\]/.exec(source);
      const methods = declared ? [...declared[1]!.matchAll(/"(\w+)"/g)].map((m) => m[1]) : [];
      expect([...INTERNAL_METHODS[c]].sort(), c).toEqual(methods.sort());
      const proto = await readFile(resolve(REPO, `proto/flaplab/${c}/v1/${c}.proto`), "utf8");
      const service = CONNECT_SERVICES[c].split(".").at(-1)!;
      const body = new RegExp(`service ${service} \\{([^}]*)\\}`).exec(proto)?.[1] ?? "";
      for (const m of INTERNAL_METHODS[c]) expect(body, `${c}.${m}`).toMatch(new RegExp(`rpc ${m}\\(`));
    }
    expect(internalPaths("engine")).toEqual([
      "/flaplab.engine.v1.EngineService/StartGame",
      "/flaplab.engine.v1.EngineService/HandleInput",
      "/flaplab.engine.v1.EngineService/ResumeGame",
    ]);
    expect(internalPaths("worldgen")).toEqual(["/flaplab.worldgen.v1.WorldGenService/GenerateWorld"]);
  });

  it("lets through on the header the runtime puts on every call between components", () => {
    expect(CALLER_HEADER).toBe(RUNTIME_CALLER_HEADER);
  });

  it("refuses every internal method on every public listener, with or without a public route for its service", () => {
    const all = COMPONENT_NAMES.flatMap((c) => internalPaths(c));
    expect(all).toHaveLength(6);
    for (const stage of STAGES) {
      const p = plan(stage);
      for (const region of p.regions) {
        if (!region.loadBalancer) continue;
        const rules = rulesOf(p, region.region);
        const priorities = rules.map((r) => r.priority);
        expect(new Set(priorities).size, `${stage}/${region.region}: unique priorities`).toBe(priorities.length);
        for (const r of rules) expect(r.priority).toBeGreaterThanOrEqual(1);
        for (const path of all) {
          expect(listenerAnswer(rules, path, []), `${stage} ${region.region} ${path}`).toBe("403");
          // The header alone opens nothing unless a caller in another region needs that method here.
          const withHeader = listenerAnswer(rules, path, [CALLER_HEADER]);
          const route = region.loadBalancer.routes.find((r) => r.kind === "internal" && r.path === path);
          expect(withHeader).toBe(route ? `forward ${route.service}:8080/http` : "403");
        }
      }
    }
  });

  it("still forwards the public methods", () => {
    const p = plan("microservices");
    const rules = rulesOf(p, "us-east-1");
    expect(listenerAnswer(rules, "/flaplab.score.v1.ScoreService/GetScores", [])).toBe("forward Score:8080/http");
    expect(listenerAnswer(rules, "/flaplab.auth.v1.AuthService/Login", [])).toBe("forward Auth:8080/http");
    expect(listenerAnswer(rules, "/flaplab.initiator.v1.InitiatorService/StartGame", [])).toBe("forward Initiator:8080/http");
    // The plain WebSocket link to the Connect host; the WebTransport link's mapping (its subprotocols) to the stream server.
    expect(listenerAnswer(rules, "/engine/v1/game?gameId=1", [])).toBe("forward Engine:8080/http");
    expect(listenerAnswer(rules, "/engine/v1/game?gameId=1", ["sec-websocket-protocol"])).toBe("forward Engine:8443/https");
    expect(listenerAnswer(rules, "/flaplab.worldgen.v1.WorldGenService/GenerateWorld", [CALLER_HEADER])).toBe("403");
  });

  it("lets components in other regions reach exactly the internal methods they call, with the caller header", () => {
    const p = plan("multiregion");
    const cross = p.edges.filter((e) => e.crossRegion);
    for (const e of cross) {
      const callee = p.services.find((s) => s.name === e.to)!;
      const rules = rulesOf(p, callee.region);
      for (const path of internalPaths(e.callee)) {
        expect(listenerAnswer(rules, path, [CALLER_HEADER]), `${e.caller}->${e.callee}`).toBe(`forward ${callee.name}:8080/http`);
        expect(listenerAnswer(rules, path, []), `${e.caller}->${e.callee} without the header`).toBe("403");
      }
    }
    // engine → score crosses regions; score's GetScores stays public, RecordRun needs the header.
    const score = rulesOf(p, "sa-east-1");
    expect(listenerAnswer(score, "/flaplab.score.v1.ScoreService/RecordRun", [])).toBe("403");
    expect(listenerAnswer(score, "/flaplab.score.v1.ScoreService/GetScores", [])).toBe("forward Score:8080/http");
    // Nobody calls auth from another region: no internal route for it anywhere.
    expect(p.regions.flatMap((r) => r.loadBalancer?.routes ?? []).filter((r) => r.kind === "internal" && r.component === "auth")).toEqual([]);
  });

  it("within one region components call each other at their Cloud Map names, never through the listener", () => {
    for (const stage of ["microservices", "multiaz"]) {
      const p = plan(stage);
      expect(p.edges.every((e) => !e.crossRegion && e.url.startsWith("http://") && e.url.endsWith(".flaplab.sst:8080"))).toBe(true);
      expect(p.regions.flatMap((r) => r.loadBalancer?.routes ?? []).filter((r) => r.kind === "internal")).toEqual([]);
    }
  });
});

describe("deployments and logs", () => {
  it("never runs two copies of a service holding engine or music games; others roll over with a second task", () => {
    for (const stage of STAGES) {
      for (const s of plan(stage).services) {
        const holdsGames = s.components.includes("engine") || s.components.includes("music");
        expect(s.deployment, `${stage}/${s.group}`).toMatchObject(
          holdsGames ? { minimumHealthyPercent: 0, maximumPercent: 100 } : { minimumHealthyPercent: 100, maximumPercent: 200 },
        );
        expect(s.deployment.deregistrationDelayS).toBe(5);
      }
    }
    expect(plan("monolith").services[0]!.deployment.maximumPercent).toBe(100);
  });

  it("names each service's log group by stage and group", () => {
    const p = plan("multiregion");
    expect(p.services.map((s) => s.logGroupPrefix).sort()).toEqual(p.services.map((s) => `/flaplab/multiregion/${s.group}/`).sort());
    for (const s of p.services) expect(s.logGroupPrefix.startsWith(logGroupPrefix("multiregion"))).toBe(true);
    // One stage's prefix does not cover another's.
    expect(logGroupPrefix("multi")).not.toBe(logGroupPrefix("multiregion").slice(0, logGroupPrefix("multi").length));
  });
});
