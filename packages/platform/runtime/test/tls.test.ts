import { generateKeyPairSync } from "node:crypto";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import { WorldGenService, WorldSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { createServiceSigner, createVerifier, generateComponentKeys } from "@flaplab/identity";
import { generate } from "selfsigned";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, parseTopology, type CallRecord, type Runtime } from "../src/index.js";

// Calls to a group at an https:// call URL (a component in another region, behind a load
// balancer): a real TLS server on loopback, every protocol × HTTP version the topologies allow.
const worldgen = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"] });
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];

let server: Http2SecureServer;
let port: number;
let ca: string;
let serving: Runtime;
let tlsConnections = 0;
const sockets = new Set<import("node:tls").TLSSocket>();
const componentKeys = generateComponentKeys();
const serviceSigner = createServiceSigner({ keys: componentKeys.signing });
const verifier = createVerifier({ publicKey: generateKeyPairSync("ed25519").publicKey, componentKeys: componentKeys.verifying });

function topology(network: { protocol: string; format: string; httpVersion: string }) {
  return parseTopology({
    name: "tls",
    network,
    groups: {
      remote: { components: ["worldgen"], address: `127.0.0.1:${port}`, callUrl: `https://127.0.0.1:${port}` },
      local: { components: all.filter((c) => c !== "worldgen"), address: "127.0.0.1:1" },
    },
  });
}

beforeAll(async () => {
  const pems = await generate([{ name: "commonName", value: "FlapLab test" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 7 as const, ip: "127.0.0.1" }] }],
  });
  ca = pems.cert;
  server = createSecureServer({ cert: pems.cert, key: pems.private, allowHTTP1: true });
  server.on("secureConnection", (socket: import("node:tls").TLSSocket) => {
    tlsConnections++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  serving = createRuntime({ topology: topology({ protocol: "connect", format: "binary", httpVersion: "1.1" }), group: "remote", verifier });
  serving.mount(worldgen, {
    generateWorld(req, ctx) {
      const principal = requirePrincipal(ctx);
      return { world: create(WorldSchema, { seed: req.seed ?? 0n, pipeSpacing: principal.username === "alice" ? 1 : 0 }) };
    },
  });
  const adapter = connectNodeAdapter({
    routes: (router) => {
      for (const m of serving.mounted) router.service(m.definition.service, m.impl);
    },
  });
  server.on("request", adapter);
});

afterAll(async () => {
  serving?.close();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server?.close(resolve));
});

const CASES = [
  { protocol: "connect", format: "binary", httpVersion: "1.1" },
  { protocol: "connect", format: "json", httpVersion: "2" },
  { protocol: "grpc", format: "binary", httpVersion: "2" },
  { protocol: "grpc-web", format: "binary", httpVersion: "1.1" },
  { protocol: "grpc-web", format: "binary", httpVersion: "2" },
] as const;

describe("calls to an https:// call URL", () => {
  for (const network of CASES) {
    it(`work over TLS and reuse one connection: ${network.protocol}+${network.format} HTTP/${network.httpVersion}`, async () => {
      const records: CallRecord[] = [];
      const caller = createRuntime({
        topology: topology(network),
        group: "local",
        verifier,
        serviceSigner,
        trustedCa: ca,
        callLog: (r) => records.push(r),
      });
      try {
        const before = tlsConnections;
        const client = caller.client(worldgen, "initiator");
        const { runInCall } = await import("@flaplab/component");
        const principal = { username: "alice", token: "unused", expiresAt: new Date(Date.now() + 60_000) };
        for (let i = 1; i <= 5; i++) {
          const res = await runInCall({ component: "initiator", verb: "StartGame", principal }, () =>
            client.generateWorld({ gameId: `g${i}`, seed: BigInt(i) }),
          );
          expect(res.world).toMatchObject({ seed: BigInt(i), pipeSpacing: 1 });
        }
        // Kept alive: five calls, one TLS handshake.
        expect(tlsConnections - before).toBe(1);
        expect(records.map((r) => [r.mode, r.code, r.httpVersion])).toEqual(
          Array.from({ length: 5 }, () => ["networked", "ok", network.httpVersion]),
        );
      } finally {
        caller.close();
      }
    });
  }

  it("refuses a server whose certificate is not trusted, with an error that says so", async () => {
    const caller = createRuntime({ topology: topology({ protocol: "connect", format: "binary", httpVersion: "1.1" }), group: "local", verifier, serviceSigner });
    try {
      const err = await caller.client(worldgen, "initiator").generateWorld({ gameId: "g", seed: 1n }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 13 });
      expect(String((err as Error).message)).toMatch(/certificate/i);
    } finally {
      caller.close();
    }
  });
});
