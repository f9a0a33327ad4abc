import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { defineComponent } from "@flaplab/component";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
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
    generateWorld: async (req) => {
      if (req.gameId === "slow") await new Promise((r) => setTimeout(r, 300));
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
    const status = await new Promise<string | undefined>((resolve, reject) => {
      const session = connect(baseUrl);
      const stream = session.request({
        ":method": "POST",
        ":path": "/flaplab.worldgen.v1.WorldGenService/GenerateWorld",
        "content-type": "application/grpc+proto",
        te: "trailers",
        ...headers,
      });
      stream.on("trailers", (t) => {
        resolve(String(t["grpc-status"]));
        session.close();
      });
      stream.on("error", reject);
      stream.on("data", () => {});
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x12, 0x7f]));
    });
    expect(status).toBe(String(Code.InvalidArgument));

    // gRPC-Web: the status is in the body's trailer frame.
    const web = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: new Uint8Array([0, 0, 0, 0, 2, 0x12, 0x7f]),
    });
    const frame = Buffer.from(await web.arrayBuffer());
    expect(frame[0]).toBe(0x80);
    expect(frame.readUInt32BE(1)).toBe(frame.length - 5);
    const trailer = frame.subarray(5).toString("utf8");
    expect(trailer).toMatch(new RegExp(`^grpc-status: ${Code.InvalidArgument}\\r?$`, "m"));
    expect(decodeURIComponent(/^grpc-message: (.*)$/m.exec(trailer)?.[1] ?? "")).toMatch(/parse binary/);
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
