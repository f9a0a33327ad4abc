import { generateKeyPairSync } from "node:crypto";
import { createServer as createH1Server, type Server } from "node:http";
import { createServer as createH2Server, type Http2Server, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { defineComponent } from "@flaplab/component";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { createServiceSigner, createVerifier, generateComponentKeys } from "@flaplab/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, parseTopology, type CallRecord, type Runtime } from "../src/index.js";

// The runtime's own networked clients against Connect-ES's Node server (connectNodeAdapter): the
// Connect client over HTTP/1.1 (the topologies' default), in binary and JSON, and the gRPC client
// over h2c.
const worldgen = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"] });
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];
const componentKeys = generateComponentKeys();
const serviceSigner = createServiceSigner({ keys: componentKeys.signing });
const verifier = createVerifier({ publicKey: generateKeyPairSync("ed25519").publicKey, componentKeys: componentKeys.verifying });

interface Seen {
  readonly timeout: string | null;
  readonly caller: string | null;
  readonly contentType: string | null;
}

interface ClientCase {
  readonly label: string;
  readonly protocol: "connect" | "grpc";
  readonly httpVersion: "1.1" | "2";
  readonly formats: readonly ("binary" | "json")[];
  /** The header that carries the deadline, and what a 10 s default looks like in it. */
  readonly timeoutHeader: string;
  readonly expectDefaultTimeout: (value: string | null) => void;
  readonly contentType: (format: "binary" | "json") => string;
  /** A Node server of the right HTTP version, and how to drop its connections at the end. */
  readonly listen: () => Promise<{ server: Server | Http2Server; closeConnections: () => void }>;
}

const CASES: readonly ClientCase[] = [
  {
    label: "Connect over HTTP/1.1",
    protocol: "connect",
    httpVersion: "1.1",
    formats: ["binary", "json"],
    timeoutHeader: "connect-timeout-ms",
    expectDefaultTimeout: (v) => expect(Number(v)).toBeGreaterThan(9000),
    contentType: (format) => (format === "binary" ? "application/proto" : "application/json"),
    listen: async () => {
      const server = createH1Server();
      return { server, closeConnections: () => server.closeAllConnections() };
    },
  },
  {
    label: "gRPC over h2c",
    protocol: "grpc",
    httpVersion: "2",
    formats: ["binary"],
    timeoutHeader: "grpc-timeout",
    expectDefaultTimeout: (v) => expect(v).toBe("10000m"),
    contentType: () => "application/grpc+proto",
    listen: async () => {
      const server = createH2Server();
      const sessions = new Set<ServerHttp2Session>();
      server.on("session", (s) => sessions.add(s));
      const closeConnections = () => {
        for (const s of sessions) s.destroy();
      };
      return { server, closeConnections };
    },
  },
];

/** The error a call failed with; a call that succeeds fails the test. */
async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("the call succeeded");
}

for (const c of CASES) {
  describe(c.label, () => {
    let server: Server | Http2Server;
    let closeConnections: () => void;
    let port: number;
    let serving: Runtime;
    /** The serving side's call records: one per networked call from a component. */
    const served: CallRecord[] = [];
    const seen: Seen[] = [];

    const topology = (format: string, at = port) =>
      parseTopology({
        name: `clients-${c.protocol}`,
        network: { protocol: c.protocol, format, httpVersion: c.httpVersion },
        groups: {
          remote: { components: ["worldgen"], address: `127.0.0.1:${at}` },
          local: { components: all.filter((n) => n !== "worldgen"), address: "127.0.0.1:1" },
        },
      });

    beforeAll(async () => {
      ({ server, closeConnections } = await c.listen());
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
      serving = createRuntime({ topology: topology("binary"), group: "remote", verifier, callLog: (r) => served.push(r) });
      serving.mount(worldgen, {
        async generateWorld(req, ctx) {
          seen.push({
            timeout: ctx.requestHeader.get(c.timeoutHeader),
            caller: ctx.requestHeader.get("x-flaplab-caller"),
            contentType: ctx.requestHeader.get("content-type"),
          });
          if (req.gameId === "fail") {
            throw new ConnectError("no world for you", Code.FailedPrecondition, { "retry-after": "7" });
          }
          if (req.gameId === "slow") await new Promise((r) => setTimeout(r, 400));
          ctx.responseHeader.set("x-served", "yes");
          ctx.responseTrailer.set("x-count", "1");
          return { world: { seed: req.seed ?? 0n, pipeSpacing: 150 } };
        },
      });
      server.on(
        "request",
        connectNodeAdapter({
          routes: (router) => {
            for (const m of serving.mounted) router.service(m.definition.service, m.impl);
          },
        }),
      );
    });

    afterAll(async () => {
      serving?.close();
      closeConnections?.();
      await new Promise((resolve) => server?.close(resolve));
    });

    for (const format of c.formats) {
      describe(format, () => {
        it("calls with the component credential, the caller and the deadline; returns the message, headers and trailers", async () => {
          const records: CallRecord[] = [];
          served.length = 0;
          const runtime = createRuntime({ topology: topology(format), group: "local", verifier, serviceSigner, callLog: (r) => records.push(r) });
          const client = runtime.client(worldgen, "initiator");
          let header: Headers | undefined;
          let trailer: Headers | undefined;
          const res = await client.generateWorld({ seed: 42n, gameId: "g-1" }, { onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
          runtime.close();
          expect(res.world?.seed).toBe(42n);
          expect(res.world?.pipeSpacing).toBe(150);
          expect(header?.get("x-served")).toBe("yes");
          expect(trailer?.get("x-count")).toBe("1");
          const last = seen[seen.length - 1]!;
          expect(last.caller).toBe("initiator.-");
          c.expectDefaultTimeout(last.timeout);
          expect(last.contentType).toBe(c.contentType(format));
          expect(records).toHaveLength(1);
          expect(records[0]).toMatchObject({
            src: "initiator",
            dst: "worldgen",
            dstVerb: "GenerateWorld",
            gameId: "g-1",
            mode: "networked",
            code: "ok",
            httpVersion: c.httpVersion,
          });
          // The callee's record of the same call: who called (from the caller header), and its share of the time.
          expect(served).toHaveLength(1);
          expect(served[0]).toMatchObject({
            src: "initiator",
            srcVerb: "-",
            srcGroup: "local",
            dst: "worldgen",
            dstVerb: "GenerateWorld",
            dstGroup: "remote",
            gameId: "g-1",
            mode: "networked",
            code: "ok",
            side: "server",
          });
          expect(served[0]!.durationNs).toBeGreaterThan(0);
          expect(served[0]!.durationNs).toBeLessThan(records[0]!.durationNs);
        });

        it("reads an error's code, message and metadata", async () => {
          served.length = 0;
          const runtime = createRuntime({ topology: topology(format), group: "local", verifier, serviceSigner });
          const err = await failure(runtime.client(worldgen, "initiator").generateWorld({ gameId: "fail" }));
          runtime.close();
          expect(err.code).toBe(Code.FailedPrecondition);
          expect(err.rawMessage).toBe("no world for you");
          expect(err.metadata.get("retry-after")).toBe("7");
          expect(served.map((r) => [r.side, r.code])).toEqual([["server", "failed_precondition"]]);
        });

        it("ends a call at its deadline with deadline_exceeded, and one the caller aborts with canceled", async () => {
          const records: CallRecord[] = [];
          const runtime = createRuntime({ topology: topology(format), group: "local", verifier, serviceSigner, callLog: (r) => records.push(r) });
          const client = runtime.client(worldgen, "initiator");
          const started = Date.now();
          const late = await failure(client.generateWorld({ gameId: "slow" }, { timeoutMs: 100 }));
          expect(late.code).toBe(Code.DeadlineExceeded);
          expect(Date.now() - started).toBeLessThan(350);
          const abort = new AbortController();
          setTimeout(() => abort.abort(), 50);
          const canceled = await failure(client.generateWorld({ gameId: "slow" }, { signal: abort.signal }));
          expect(canceled.code).toBe(Code.Canceled);
          // The connection is still good for the next call.
          expect((await client.generateWorld({ seed: 3n })).world?.seed).toBe(3n);
          runtime.close();
          expect(records.map((r) => r.code)).toEqual(["deadline_exceeded", "canceled", "ok"]);
        });
      });
    }

    it("reports a group nobody listens on as unavailable", async () => {
      const closed = createH1Server();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const free = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const runtime = createRuntime({ topology: topology("binary", free), group: "local", verifier, serviceSigner });
      const err = await failure(runtime.client(worldgen, "initiator").generateWorld({}));
      runtime.close();
      expect(err.code).toBe(Code.Unavailable);
      expect(err.message).toMatch(/ECONNREFUSED/);
    });
  });
}
