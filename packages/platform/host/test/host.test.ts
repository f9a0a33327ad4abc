import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { clientAddressOf, defineComponent } from "@flaplab/component";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { GenerateWorldRequestSchema, GenerateWorldResponseSchema, WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { createSigner, createVerifier, loadOrCreateKeys } from "@flaplab/identity";
import { createRuntime, parseTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost, type Host } from "../src/index.js";

const worldgen = defineComponent({ name: "worldgen", service: WorldGenService });
let host: Host;
let baseUrl: string;
let dir: string;
let headers: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-host-"));
  const keys = await loadOrCreateKeys(dir);
  const topology = parseTopology({
    name: "host-test",
    groups: {
      w: { components: ["worldgen"], address: "127.0.0.1:0" },
      rest: { components: ["auth", "engine", "initiator", "music", "score"], address: "127.0.0.1:1" },
    },
  });
  const runtime = createRuntime({ topology, group: "w", verifier: createVerifier({ publicKey: keys.publicKey }) });
  runtime.mount(worldgen, {
    generateWorld: async (req, ctx) => {
      if (req.gameId === "slow") await new Promise((r) => setTimeout(r, 300));
      if (req.gameId === "address") {
        throw new ConnectError(`from ${String(clientAddressOf(ctx))}`, Code.FailedPrecondition, { "retry-after": "3" });
      }
      if (req.gameId === "deadline") {
        // Waits for the call's signal; answers with the code it was aborted with, as the seed.
        const signal = ctx.signal;
        await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
        ctx.responseHeader.set("x-aborted-after-ms", String(ctx.timeoutMs() ?? "none"));
        ctx.responseTrailer.set("x-reason", ConnectError.from(signal.reason).message);
        return { world: { seed: BigInt(ConnectError.from(signal.reason).code) } };
      }
      return { world: { seed: req.seed ?? 0n, pipeSpacing: 150 } };
    },
  });
  host = await createHost({ runtime, logger: pino({ level: "silent" }) });
  baseUrl = `http://127.0.0.1:${await host.listen(0)}`;
  headers = { authorization: `Bearer ${(await createSigner({ privateKey: keys.privateKey }).sign("alice")).token}` };
});

afterAll(async () => {
  await host?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The grpc-status of one raw gRPC GenerateWorld call over h2c with `body` (from its trailers, or its headers when trailers-only). */
function rawGrpcStatus(body: Buffer): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const session = connect(baseUrl);
    const stream = session.request({
      ":method": "POST",
      ":path": "/flaplab.worldgen.v1.WorldGenService/GenerateWorld",
      "content-type": "application/grpc+proto",
      te: "trailers",
      ...headers,
    });
    let status: string | undefined;
    stream.on("response", (h) => (status = h["grpc-status"] as string | undefined));
    stream.on("trailers", (t) => (status = String(t["grpc-status"])));
    stream.on("end", () => {
      resolve(status);
      session.close();
    });
    stream.on("error", reject);
    stream.on("data", () => {});
    stream.end(body);
  });
}

describe("one port, every protocol", () => {
  const transports = {
    "connect binary over HTTP/1.1": () => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    "connect JSON over h2c": () => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false }),
    "gRPC over h2c": () => createGrpcTransport({ baseUrl }),
    "gRPC-Web over HTTP/1.1": () => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
    "gRPC-Web over h2c": () => createGrpcWebTransport({ baseUrl, httpVersion: "2" }),
  };
  for (const [name, transport] of Object.entries(transports)) {
    it(`serves ${name}`, async () => {
      const client = createClient(WorldGenService, transport());
      const res = await client.generateWorld({ seed: 42n }, { headers });
      expect(res.world?.seed).toBe(42n);
    });
  }

  it("answers the health check with the group and its components", async () => {
    const res = await fetch(`${baseUrl}/healthz`);
    expect(await res.json()).toEqual({ status: "ok", topology: "host-test", group: "w", components: ["worldgen"] });
  });

  it("sends CORS headers a browser needs for Connect", async () => {
    const res = await fetch(`${baseUrl}/flaplab.worldgen.v1.WorldGenService/GenerateWorld`, {
      method: "OPTIONS",
      headers: { origin: "http://127.0.0.1:5173", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type,connect-protocol-version" },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://127.0.0.1:5173");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
  });

  it("answers a body that is not protobuf with invalid_argument (Connect, gRPC and gRPC-Web)", async () => {
    const url = `${baseUrl}/flaplab.worldgen.v1.WorldGenService/GenerateWorld`;
    const res = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/proto" }, body: new Uint8Array([0x12, 0x7f]) });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument" });

    const grpc = createClient(WorldGenService, createGrpcTransport({ baseUrl, interceptors: [(next) => async (req) => next(req)] }));
    // A valid call still works after the bad one.
    expect((await grpc.generateWorld({ seed: 1n }, { headers })).world?.seed).toBe(1n);
    expect(await rawGrpcStatus(Buffer.from([0, 0, 0, 0, 2, 0x12, 0x7f]))).toBe(String(Code.InvalidArgument));

    // gRPC-Web: refused before any message, so a trailers-only answer (the status in its headers).
    const web = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: new Uint8Array([0, 0, 0, 0, 2, 0x12, 0x7f]),
    });
    expect(web.status).toBe(200);
    expect(web.headers.get("grpc-status")).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(web.headers.get("grpc-message") ?? "")).toMatch(/^parse binary: /);
    expect((await web.arrayBuffer()).byteLength).toBe(0);
    // The same client gets its answers as before.
    const webClient = createClient(WorldGenService, createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }));
    expect((await webClient.generateWorld({ seed: 2n }, { headers })).world?.seed).toBe(2n);
  });

  it("answers invalid_argument for a bad message in an envelope whose flags Connect-ES ignores (gRPC h2c, gRPC-Web HTTP/1.1)", async () => {
    // Flags 0x02 and 0x80 are not the compressed bit: Connect-ES decodes the message anyway and,
    // failing, answers `internal` in the headers of a trailers-only answer.
    expect(await rawGrpcStatus(Buffer.from([0x02, 0, 0, 0, 2, 0x12, 0x7f]))).toBe(String(Code.InvalidArgument));

    const web = await fetch(`${baseUrl}/flaplab.worldgen.v1.WorldGenService/GenerateWorld`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: new Uint8Array([0x80, 0, 0, 0, 2, 0x12, 0x7f]),
    });
    expect(web.headers.get("grpc-status")).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(web.headers.get("grpc-message") ?? "")).toMatch(/^parse binary: /);
  });
});

describe("calls served in front of Fastify", () => {
  const url = () => `${baseUrl}/flaplab.worldgen.v1.WorldGenService/GenerateWorld`;
  const protocols = {
    "Connect binary over HTTP/1.1": () => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    "Connect JSON over HTTP/1.1": () => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
    "gRPC over h2c": () => createGrpcTransport({ baseUrl }),
    "gRPC-Web over HTTP/1.1": () => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  };
  for (const [name, transport] of Object.entries(protocols)) {
    it(`gives the handler the client's address, and sends an error's metadata (${name})`, async () => {
      const err = await createClient(WorldGenService, transport())
        .generateWorld({ gameId: "address" }, { headers })
        .catch((e: unknown) => ConnectError.from(e));
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
      expect((err as ConnectError).rawMessage).toBe("from 127.0.0.1");
      expect((err as ConnectError).metadata.get("retry-after")).toBe("3");
    });
  }

  it("aborts the handler's signal at the Connect deadline and sends its headers and trailers", async () => {
    const started = Date.now();
    const res = await fetch(url(), {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "connect-timeout-ms": "150", "connect-protocol-version": "1" },
      body: JSON.stringify({ gameId: "deadline" }),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    // Aborted at the deadline: ≤ 1 ms left, as the timer (monotonic clock) and timeoutMs() (Date.now) round apart.
    expect(Number(res.headers.get("x-aborted-after-ms"))).toBeLessThanOrEqual(1);
    expect(res.headers.get("trailer-x-reason")).toBe("[deadline_exceeded] the operation timed out");
    expect(await res.json()).toEqual({ world: { seed: String(Code.DeadlineExceeded) } });
  });

  it("aborts the handler's signal at the gRPC deadline and sends its headers and trailers", async () => {
    const request = toBinary(GenerateWorldRequestSchema, create(GenerateWorldRequestSchema, { gameId: "deadline" }));
    const envelope = Buffer.alloc(5 + request.byteLength);
    envelope.writeUInt32BE(request.byteLength, 1);
    envelope.set(request, 5);
    const session = connect(baseUrl);
    const stream = session.request({
      ":method": "POST",
      ":path": "/flaplab.worldgen.v1.WorldGenService/GenerateWorld",
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": "150m",
      ...headers,
    });
    const started = Date.now();
    const [head, trailers, body] = await new Promise<[Record<string, unknown>, Record<string, unknown>, Buffer]>((resolve, reject) => {
      let h: Record<string, unknown> = {};
      const chunks: Buffer[] = [];
      stream.on("response", (x) => (h = x));
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("trailers", (t) => resolve([h, t, Buffer.concat(chunks)]));
      stream.on("error", reject);
      stream.end(envelope);
    });
    session.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(head["content-type"]).toBe("application/grpc+proto");
    expect(Number(head["x-aborted-after-ms"])).toBeLessThanOrEqual(1);
    expect(trailers["grpc-status"]).toBe("0");
    expect(trailers["x-reason"]).toBe("[deadline_exceeded] the operation timed out");
    expect(body.readUInt32BE(1)).toBe(body.length - 5);
    expect(fromBinary(GenerateWorldResponseSchema, body.subarray(5)).world?.seed).toBe(BigInt(Code.DeadlineExceeded));
  });

  it("answers a bad deadline header, an unknown encoding and a body over the limit as Connect does", async () => {
    const post = (extra: Record<string, string>, body: Uint8Array) =>
      fetch(url(), { method: "POST", headers: { ...headers, "content-type": "application/proto", ...extra }, body });
    const badTimeout = await post({ "connect-timeout-ms": "soon" }, new Uint8Array(0));
    expect(badTimeout.status).toBe(400);
    expect(await badTimeout.json()).toMatchObject({ code: "invalid_argument" });
    const large = await post({}, new Uint8Array(1024 * 1024 + 1));
    expect(large.status).toBe(429);
    expect(await large.json()).toMatchObject({ code: "resource_exhausted" });
    const gzip = await post({ "content-encoding": "gzip" }, new Uint8Array([1, 2, 3]));
    expect(gzip.status).toBe(501);
    expect(await gzip.json()).toMatchObject({ code: "unimplemented" });
    // The server still serves after these.
    const ok = await post({}, new Uint8Array(0));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/proto");
  });

  it("leaves paths that are not RPCs to Fastify", async () => {
    expect((await fetch(`${baseUrl}/flaplab.worldgen.v1.WorldGenService/Nope`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });
});

describe("shutdown", () => {
  it("finishes a call in flight, then refuses new connections", async () => {
    const client = createClient(WorldGenService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    await client.generateWorld({ seed: 5n }, { headers }); // leaves an idle h2c session open
    const slow = client.generateWorld({ gameId: "slow", seed: 9n }, { headers });
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const closing = host.close();
    expect((await slow).world?.seed).toBe(9n);
    await closing;
    // Idle connections were closed at once, not cut at the end of the grace period.
    expect(Date.now() - started).toBeLessThan(2500);
    const after = await createClient(WorldGenService, createConnectTransport({ baseUrl, httpVersion: "1.1" }))
      .generateWorld({}, { headers })
      .catch((e: unknown) => ConnectError.from(e));
    expect(after).toBeInstanceOf(ConnectError);
    expect((after as ConnectError).message).toMatch(/ECONNREFUSED/);
  });
});
