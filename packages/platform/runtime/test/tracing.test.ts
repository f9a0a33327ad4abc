import { generateKeyPairSync } from "node:crypto";
import { createServer as createH1Server, type Server } from "node:http";
import { createServer as createH2Server, type Http2Server, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { defineComponent } from "@flaplab/component";
import { MusicService } from "@flaplab/contracts/music/v1/music_pb";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { createServiceSigner, createVerifier, generateComponentKeys } from "@flaplab/identity";
import { propagation, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRuntime, parseTopology, type Runtime } from "../src/index.js";

// A call from outside (the test, as the initiator) to worldgen, whose handler calls music: in
// every call mode the four spans form one trace, each parented on the one before, and the trace
// context travels as W3C traceparent between processes. Without a tracer nothing is added.
const worldgen = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"] });
const music = defineComponent({ name: "music", service: MusicService, internalMethods: ["PlayMusic"] });
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];
const componentKeys = generateComponentKeys();
const serviceSigner = createServiceSigner({ keys: componentKeys.signing });
const verifier = createVerifier({ publicKey: generateKeyPairSync("ed25519").publicKey, componentKeys: componentKeys.verifying });

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer: Tracer = provider.getTracer("test");

/** The traceparent header each handler saw, per component. */
const seenHeaders: Record<string, string | null> = {};

function mountBoth(runtime: Runtime, only?: "worldgen" | "music"): void {
  if (only !== "music") {
    runtime.mount(worldgen, {
      async generateWorld(req, ctx: HandlerContext) {
        seenHeaders["worldgen"] = ctx.requestHeader.get("traceparent");
        await runtime.client(music, "worldgen").playMusic({ gameId: req.gameId, tick: 1 });
        if (req.gameId === "fail") throw new ConnectError("no world", Code.FailedPrecondition);
        return { world: { seed: 7n } };
      },
    });
  }
  if (only !== "worldgen") {
    runtime.mount(music, {
      playMusic(_req, ctx: HandlerContext) {
        seenHeaders["music"] = ctx.requestHeader.get("traceparent");
        return {};
      },
    });
  }
}

beforeAll(() => {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});

afterAll(async () => {
  propagation.disable();
  await provider.shutdown();
});

beforeEach(() => {
  exporter.reset();
  for (const k of Object.keys(seenHeaders)) delete seenHeaders[k];
});

const byKind = (spans: readonly ReadableSpan[], kind: SpanKind, name: string) => spans.filter((s) => s.kind === kind && s.name === name);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The four spans of test → worldgen → music, checked as one tree. */
function expectChain(mode: string): void {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(4);
  const [wgClient] = byKind(spans, SpanKind.CLIENT, "flaplab.worldgen.v1.WorldGenService/GenerateWorld");
  const [wgServer] = byKind(spans, SpanKind.SERVER, "flaplab.worldgen.v1.WorldGenService/GenerateWorld");
  const [musicClient] = byKind(spans, SpanKind.CLIENT, "flaplab.music.v1.MusicService/PlayMusic");
  const [musicServer] = byKind(spans, SpanKind.SERVER, "flaplab.music.v1.MusicService/PlayMusic");
  expect(wgClient && wgServer && musicClient && musicServer).toBeTruthy();
  expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
  expect(parentOf(wgClient!)).toBeUndefined();
  expect(parentOf(wgServer!)).toBe(wgClient!.spanContext().spanId);
  expect(parentOf(musicClient!)).toBe(wgServer!.spanContext().spanId);
  expect(parentOf(musicServer!)).toBe(musicClient!.spanContext().spanId);
  expect(wgClient!.attributes).toMatchObject({
    "rpc.service": "flaplab.worldgen.v1.WorldGenService",
    "rpc.method": "GenerateWorld",
    "flaplab.call.mode": mode,
    "flaplab.caller": "initiator",
    "flaplab.callee": "worldgen",
    "flaplab.game.id": "g-1",
  });
  expect(musicClient!.attributes).toMatchObject({ "flaplab.call.mode": mode, "flaplab.caller": "worldgen", "flaplab.callee": "music" });
  expect(musicServer!.attributes).toMatchObject({ "flaplab.callee": "music", "flaplab.caller": "worldgen", "flaplab.caller.verb": "GenerateWorld" });
}

for (const inProcess of ["direct", "serialized"] as const) {
  describe(`${inProcess} calls`, () => {
    const start = (traced: boolean) => {
      const runtime = createRuntime({
        topology: parseTopology({ name: "t", inProcess, groups: { one: { components: all, address: "127.0.0.1:9000" } } }),
        group: "one",
        verifier,
        serviceSigner,
        ...(traced ? { tracer } : {}),
      });
      mountBoth(runtime);
      return runtime;
    };

    it("make one trace: client span, server span, the handler's call as its child", async () => {
      const runtime = start(true);
      await runtime.client(worldgen, "initiator").generateWorld({ gameId: "g-1" });
      runtime.close();
      expectChain(inProcess);
    });

    it("mark a failed call's spans as errors with the Connect code", async () => {
      const runtime = start(true);
      await expect(runtime.client(worldgen, "initiator").generateWorld({ gameId: "fail" })).rejects.toThrow(/no world/);
      runtime.close();
      const failed = exporter.getFinishedSpans().filter((s) => s.name.endsWith("/GenerateWorld"));
      expect(failed).toHaveLength(2);
      for (const s of failed) {
        expect(s.status.code).toBe(SpanStatusCode.ERROR);
        expect(s.attributes["rpc.connect_rpc.error_code"]).toBe("failed_precondition");
      }
    });

    it("without a tracer make no span and carry no traceparent", async () => {
      const runtime = start(false);
      await runtime.client(worldgen, "initiator").generateWorld({ gameId: "g-1" });
      runtime.close();
      expect(exporter.getFinishedSpans()).toHaveLength(0);
      expect(seenHeaders["music"]).toBeNull();
    });
  });
}

interface NetCase {
  readonly label: string;
  readonly network: { readonly protocol: string; readonly format: string; readonly httpVersion: string };
  readonly listen: () => { server: Server | Http2Server; closeConnections: () => void };
}

const h1 = () => {
  const server = createH1Server();
  return { server, closeConnections: () => server.closeAllConnections() };
};
const h2 = () => {
  const server = createH2Server();
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (s) => sessions.add(s));
  return { server, closeConnections: () => {
      for (const s of sessions) s.destroy();
    },
  };
};

const NET_CASES: readonly NetCase[] = [
  { label: "Connect over HTTP/1.1 (the runtime's own client)", network: { protocol: "connect", format: "binary", httpVersion: "1.1" }, listen: h1 },
  { label: "gRPC over h2c (the runtime's own client)", network: { protocol: "grpc", format: "binary", httpVersion: "2" }, listen: h2 },
  { label: "gRPC-Web over HTTP/1.1 (Connect-ES's transport)", network: { protocol: "grpc-web", format: "binary", httpVersion: "1.1" }, listen: h1 },
];

for (const c of NET_CASES) {
  describe(`networked: ${c.label}`, () => {
    const servers: Array<{ server: Server | Http2Server; closeConnections: () => void; port: number }> = [];

    beforeAll(async () => {
      for (let i = 0; i < 2; i++) {
        const s = c.listen();
        await new Promise<void>((resolve) => s.server.listen(0, "127.0.0.1", resolve));
        servers.push({ ...s, port: (s.server.address() as AddressInfo).port });
      }
    });

    afterAll(async () => {
      for (const s of servers) {
        s.closeConnections();
        await new Promise((resolve) => s.server.close(resolve));
      }
    });

    /** worldgen and music in two groups, each served on its own port, and the test's group. */
    const start = (traced: boolean) => {
      const topology = parseTopology({
        name: "net",
        network: c.network,
        groups: {
          wg: { components: ["worldgen"], address: `127.0.0.1:${servers[0]!.port}` },
          mu: { components: ["music"], address: `127.0.0.1:${servers[1]!.port}` },
          local: { components: all.filter((n) => n !== "worldgen" && n !== "music"), address: "127.0.0.1:1" },
        },
      });
      const options = { topology, verifier, serviceSigner, ...(traced ? { tracer } : {}) };
      const runtimes = [createRuntime({ ...options, group: "wg" }), createRuntime({ ...options, group: "mu" })];
      mountBoth(runtimes[0]!, "worldgen");
      mountBoth(runtimes[1]!, "music");
      runtimes.forEach((r, i) => {
        const server = servers[i]!.server;
        server.removeAllListeners("request");
        server.on("request", connectNodeAdapter({
            routes: (router) => {
              for (const m of r.mounted) router.service(m.definition.service, m.impl);
            },
          }),);
      });
      const local = createRuntime({ ...options, group: "local" });
      return {
        local,
        close: () => {
          for (const r of [...runtimes, local]) r.close();
        },
      };
    };

    it("carries traceparent between processes and makes one trace", async () => {
      const { local, close } = start(true);
      await local.client(worldgen, "initiator").generateWorld({ gameId: "g-1" });
      close();
      expectChain("networked");
      const musicClient = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT && s.name.endsWith("/PlayMusic"))!;
      const sc = musicClient.spanContext();
      expect(seenHeaders["music"]).toBe(`00-${sc.traceId}-${sc.spanId}-01`);
    });

    it("without a tracer sends no traceparent header", async () => {
      const { local, close } = start(false);
      await local.client(worldgen, "initiator").generateWorld({ gameId: "g-1" });
      close();
      expect(exporter.getFinishedSpans()).toHaveLength(0);
      expect(seenHeaders["worldgen"]).toBeNull();
      expect(seenHeaders["music"]).toBeNull();
    });
  });
}
