import { mkdtemp, rm } from "node:fs/promises";
import { connect as connectH2 } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { defineComponent } from "@flaplab/component";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { createSigner, createVerifier, loadOrCreateKeys } from "@flaplab/identity";
import { createRuntime, parseTopology } from "@flaplab/runtime";
import { type Logger, pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  corsOriginsFromEnv,
  createHost,
  defaultCorsOrigins,
  HostConfigError,
  hostLimitsFromEnv,
  resolveHostLimits,
  SHED_MESSAGE,
  type Host,
  type HostLimits,
} from "../src/index.js";

const worldgen = defineComponent({ name: "worldgen", service: WorldGenService });
let dir: string;
let headers: Record<string, string>;
let keys: Awaited<ReturnType<typeof loadOrCreateKeys>>;
const hosts: Host[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-host-limits-"));
  keys = await loadOrCreateKeys(dir);
  headers = { authorization: `Bearer ${(await createSigner({ privateKey: keys.privateKey }).sign("alice")).token}` };
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await rm(dir, { recursive: true, force: true });
});

/** A host whose GenerateWorld takes `gameId` ms when gameId is a number. */
async function startHost(
  limits: Partial<HostLimits>,
  corsOrigins?: readonly string[],
  logger: Logger = pino({ level: "silent" }),
): Promise<{ host: Host; baseUrl: string; port: number }> {
  const topology = parseTopology({
    name: "limits-test",
    groups: {
      w: { components: ["worldgen"], address: "127.0.0.1:0" },
      rest: { components: ["auth", "engine", "initiator", "music", "score"], address: "127.0.0.1:1" },
    },
  });
  const runtime = createRuntime({ topology, group: "w", verifier: createVerifier({ publicKey: keys.publicKey }) });
  runtime.mount(worldgen, {
    generateWorld: async (req) => {
      const ms = Number(req.gameId);
      if (ms > 0) await new Promise((r) => setTimeout(r, ms));
      return { world: { seed: req.seed ?? 0n, pipeSpacing: 150 } };
    },
  });
  const host = await createHost({ runtime, logger, limits, logIntervalMs: 300, ...(corsOrigins ? { corsOrigins } : {}) });
  hosts.push(host);
  const port = await host.listen(0);
  return { host, baseUrl: `http://127.0.0.1:${port}`, port };
}

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    const e = ConnectError.from(err);
    return `${Code[e.code]}: ${e.rawMessage}`;
  }
}

describe("overload", () => {
  const transports: Record<string, (baseUrl: string) => Transport> = {
    "Connect binary over HTTP/1.1": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    "Connect JSON over h2c": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false }),
    "gRPC over h2c": (baseUrl) => createGrpcTransport({ baseUrl }),
    "gRPC-Web over HTTP/1.1": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
    "gRPC-Web over h2c": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2" }),
  };
  for (const [name, transport] of Object.entries(transports)) {
    it(`sheds a call beyond the limit and the queue with resource_exhausted (${name})`, async () => {
      const { baseUrl, host } = await startHost({ maxConcurrentCalls: 1, maxQueuedCalls: 1 });
      const client = createClient(WorldGenService, transport(baseUrl));
      const busy = client.generateWorld({ gameId: "300", seed: 1n }, { headers });
      await new Promise((r) => setTimeout(r, 50));
      const queued = client.generateWorld({ gameId: "0", seed: 2n }, { headers });
      await new Promise((r) => setTimeout(r, 50));
      expect(await outcome(client.generateWorld({ seed: 3n }, { headers }))).toBe(`ResourceExhausted: ${SHED_MESSAGE}`);
      // The running and the queued call both finish.
      expect((await busy).world?.seed).toBe(1n);
      expect((await queued).world?.seed).toBe(2n);
      expect((await host.stats()).shed).toEqual({ "queue-full": 1 });
      expect(await outcome(client.generateWorld({ seed: 4n }, { headers }))).toBe("ok");
    });
  }

  it("sheds a call that waited too long in the queue", async () => {
    const { baseUrl, host } = await startHost({ maxConcurrentCalls: 1, maxQueuedCalls: 5, maxQueueWaitMs: 100 });
    const client = createClient(WorldGenService, createGrpcTransport({ baseUrl }));
    const busy = client.generateWorld({ gameId: "400", seed: 1n }, { headers });
    await new Promise((r) => setTimeout(r, 30));
    const started = Date.now();
    expect(await outcome(client.generateWorld({ seed: 2n }, { headers }))).toBe(`ResourceExhausted: ${SHED_MESSAGE}`);
    expect(Date.now() - started).toBeLessThan(350);
    await busy;
    expect((await host.stats()).shed).toEqual({ "queue-timeout": 1 });
  });

  it("answers the health check while every slot is taken", async () => {
    const { baseUrl } = await startHost({ maxConcurrentCalls: 1, maxQueuedCalls: 0 });
    const client = createClient(WorldGenService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const busy = client.generateWorld({ gameId: "300" }, { headers });
    await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    await busy;
  });

  it("logs shedding as a few structured events, not one line per shed call", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const { baseUrl } = await startHost({ maxConcurrentCalls: 1, maxQueuedCalls: 0 }, undefined, logger);
    const client = createClient(WorldGenService, createGrpcTransport({ baseUrl }));
    const busy = client.generateWorld({ gameId: "500" }, { headers });
    await new Promise((r) => setTimeout(r, 50));
    const shed = await Promise.all(Array.from({ length: 100 }, () => outcome(client.generateWorld({}, { headers }))));
    expect(shed.every((o) => o.startsWith("ResourceExhausted"))).toBe(true);
    await busy;
    await new Promise((r) => setTimeout(r, 800)); // two log intervals: the summary, then the end
    const events = lines.filter((l) => typeof l["event"] === "string" && String(l["event"]).startsWith("rpc-shed"));
    expect(events.length).toBeLessThanOrEqual(3);
    // Queue full, or past the connection's share of the calls.
    const counted = events
      .filter((e) => e["event"] === "rpc-shed")
      .reduce((n, e) => n + Object.values(e["counts"] as Record<string, number>).reduce((a, b) => a + b, 0), 0);
    expect(counted).toBe(100);
    expect(events[0]).toMatchObject({ level: 40, event: "rpc-shed", inFlight: 1, queued: 0 });
    expect(events.at(-1)).toMatchObject({ event: "rpc-shed-stopped", total: 100 });
  });

  it("advertises the stream limit to h2c clients", async () => {
    const { baseUrl } = await startHost({ maxStreamsPerSession: 77 });
    const session = connectH2(baseUrl);
    const settings = await new Promise<{ maxConcurrentStreams?: number }>((resolve) => session.once("remoteSettings", resolve));
    session.close();
    expect(settings.maxConcurrentStreams).toBe(77);
  });
});

describe("connection limits", () => {
  const closedWithin = (socket: Socket, ms: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const t0 = Date.now();
      const timer = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms);
      socket.once("close", () => {
        clearTimeout(timer);
        resolve(Date.now() - t0);
      });
      socket.on("error", () => {});
    });
  const open = (port: number): Promise<Socket> =>
    new Promise((resolve, reject) => {
      // Read (and drop) whatever the server sends, so that its close is seen.
      const s = connectTcp(port, "127.0.0.1", () => resolve(s.resume()));
      s.once("error", reject);
    });

  it("closes a connection that sends nothing, and one that never finishes its headers", async () => {
    const { port, host } = await startHost({ firstByteTimeoutMs: 300 });
    const silent = await open(port);
    const silentClosed = closedWithin(silent, 2000);
    const slow = await open(port);
    const slowClosed = closedWithin(slow, 2000);
    slow.write("POST /flaplab.worldgen.v1.WorldGenService/GenerateWorld HTTP/1.1\r\nhost: x\r\n");
    expect(await silentClosed).toBeGreaterThanOrEqual(250);
    await slowClosed;
    expect((await host.stats()).closedConnections["first-byte-timeout"]).toBe(1);
  });

  it("tells h2c from HTTP/1.1 when the first bytes come in several packets", async () => {
    const { port } = await startHost({});
    const firstAnswer = async (parts: Buffer[]): Promise<Buffer> => {
      const s = await open(port);
      const answer = new Promise<Buffer>((resolve) => s.once("data", resolve));
      for (const part of parts) {
        s.write(part);
        await new Promise((r) => setTimeout(r, 30));
      }
      const a = await answer;
      s.destroy();
      return a;
    };
    // The h2c preface and an empty SETTINGS frame, split after "P" and after "PR": the server's first frame is SETTINGS.
    const preface = Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1"), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);
    for (const cut of [1, 2]) {
      const a = await firstAnswer([preface.subarray(0, cut), preface.subarray(cut)]);
      expect(a[3], `split after ${cut} bytes`).toBe(4);
    }
    // An HTTP/1.1 request split after "G" is still HTTP/1.1.
    const get = Buffer.from("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n", "latin1");
    expect((await firstAnswer([get.subarray(0, 1), get.subarray(1)])).toString("latin1")).toMatch(/^HTTP\/1\.1 200/);
  });

  it("closes idle HTTP/1.1 keep-alive connections and idle h2c sessions", async () => {
    const { port, baseUrl, host } = await startHost({ idleTimeoutMs: 300 });
    const h1 = await open(port);
    const h1Closed = closedWithin(h1, 2000);
    h1.write(`GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n`);
    const session = connectH2(baseUrl);
    const h2Closed = new Promise<number>((resolve) => {
      const t0 = Date.now();
      session.once("close", () => resolve(Date.now() - t0));
      session.on("error", () => {});
    });
    await new Promise<void>((resolve, reject) => {
      const req = session.request({ ":path": "/healthz" });
      req.on("response", () => {});
      req.resume();
      req.on("end", resolve);
      req.on("error", reject);
    });
    expect(await h1Closed).toBeGreaterThanOrEqual(250);
    expect(await h2Closed).toBeGreaterThanOrEqual(250);
    expect(await h2Closed).toBeLessThan(2000);
    expect((await host.stats()).closedConnections["idle-h2c"]).toBe(1);
  });

  it("caps the number of open connections", async () => {
    const { port, host } = await startHost({ maxConnections: 3 });
    const sockets = await Promise.all([0, 1, 2].map(() => open(port)));
    const extra = await open(port);
    await closedWithin(extra, 2000);
    expect((await host.stats()).connections).toBe(3);
    expect((await host.stats()).closedConnections["max-connections"]).toBe(1);
    for (const s of sockets) s.destroy();
  });
});

describe("CORS", () => {
  const preflight = (baseUrl: string, origin: string) =>
    fetch(`${baseUrl}/flaplab.worldgen.v1.WorldGenService/GenerateWorld`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" },
    });

  it("allows listed origins only", async () => {
    const { baseUrl } = await startHost({}, ["https://play.example.com"]);
    expect((await preflight(baseUrl, "https://play.example.com")).headers.get("access-control-allow-origin")).toBe("https://play.example.com");
    expect((await preflight(baseUrl, "https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
    expect((await preflight(baseUrl, "http://127.0.0.1:5173")).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("gives a shed response the CORS headers of a listed origin", async () => {
    const { baseUrl } = await startHost({ maxConcurrentCalls: 1, maxQueuedCalls: 0 }, ["https://play.example.com"]);
    const client = createClient(WorldGenService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const busy = client.generateWorld({ gameId: "300" }, { headers });
    await new Promise((r) => setTimeout(r, 50));
    const res = await fetch(`${baseUrl}/flaplab.worldgen.v1.WorldGenService/GenerateWorld`, {
      method: "POST",
      headers: { ...headers, origin: "https://play.example.com", "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ code: "resource_exhausted", message: SHED_MESSAGE });
    expect(res.headers.get("access-control-allow-origin")).toBe("https://play.example.com");
    await busy;
  });
});

describe("configuration", () => {
  it("reads limits from FLAPLAB_* variables and rejects bad values clearly", () => {
    expect(hostLimitsFromEnv({ FLAPLAB_IDLE_TIMEOUT_MS: "90000", FLAPLAB_MAX_QUEUED_CALLS: "0" })).toEqual({ idleTimeoutMs: 90_000, maxQueuedCalls: 0 });
    expect(() => hostLimitsFromEnv({ FLAPLAB_FIRST_BYTE_TIMEOUT_MS: "10s" })).toThrow(HostConfigError);
    expect(() => hostLimitsFromEnv({ FLAPLAB_MAX_CONNECTIONS: "0" })).toThrow(/FLAPLAB_MAX_CONNECTIONS must be a whole number ≥ 1, got "0"/);
    expect(() => resolveHostLimits({ maxConcurrentCalls: 0.5 })).toThrow(/maxConcurrentCalls/);
    expect(resolveHostLimits({}).idleTimeoutMs).toBe(120_000);
  });

  it("reads CORS origins from FLAPLAB_CORS_ORIGINS, else the local web client and the topology's web address", () => {
    expect(corsOriginsFromEnv({ FLAPLAB_CORS_ORIGINS: "https://a.example, http://b.example:8080/" }, [])).toEqual(["https://a.example", "http://b.example:8080"]);
    expect(() => corsOriginsFromEnv({ FLAPLAB_CORS_ORIGINS: "evil" }, [])).toThrow(HostConfigError);
    expect(corsOriginsFromEnv({}, ["http://x"])).toEqual(["http://x"]);
    expect(defaultCorsOrigins("http://127.0.0.1:41234/")).toEqual([
      "http://127.0.0.1:5173",
      "http://localhost:5173",
      "http://127.0.0.1:41234",
      "http://localhost:41234",
    ]);
  });
});
