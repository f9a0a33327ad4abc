// What the call-mode and load sections share: the stand-in WorldGen, the request, topologies and keys.
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { COMPONENT_NAMES } from "@flaplab/component";
import {
  GenerateWorldRequestSchema,
  GenerateWorldResponseSchema,
  type GenerateWorldRequest,
  type WorldGenService,
} from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { type LocalIdentity, openLocalIdentity } from "@flaplab/identity";
import { type NetworkSettings, parseTopology, type Topology } from "@flaplab/runtime";
import { createWorldGen } from "@flaplab/worldgen";
import { EASY_SEED } from "./seed.js";

export type Workload = "trivial" | "worldgen";

/** A networked call mode: the protocol, encoding and HTTP version of the client's topology. */
export interface NetworkMode {
  readonly id: string;
  readonly label: string;
  readonly network: NetworkSettings;
}

export const NETWORK_MODES: readonly NetworkMode[] = [
  { id: "connect-json-h1", label: "Connect JSON, HTTP/1.1", network: { protocol: "connect", format: "json", httpVersion: "1.1" } },
  { id: "connect-json-h2c", label: "Connect JSON, h2c", network: { protocol: "connect", format: "json", httpVersion: "2" } },
  { id: "connect-proto-h1", label: "Connect binary, HTTP/1.1", network: { protocol: "connect", format: "binary", httpVersion: "1.1" } },
  { id: "connect-proto-h2c", label: "Connect binary, h2c", network: { protocol: "connect", format: "binary", httpVersion: "2" } },
  { id: "grpc-h2c", label: "gRPC, h2c", network: { protocol: "grpc", format: "binary", httpVersion: "2" } },
  { id: "grpc-web-h1", label: "gRPC-Web, HTTP/1.1", network: { protocol: "grpc-web", format: "binary", httpVersion: "1.1" } },
  { id: "grpc-web-h2c", label: "gRPC-Web, h2c", network: { protocol: "grpc-web", format: "binary", httpVersion: "2" } },
];

/** The networked mode every topology uses unless it says otherwise: the baseline of the load section. */
export const DEFAULT_NETWORK_MODE = "connect-proto-h1";

/** The request every call sends: the easy seed's world in the browser's viewport. */
export function benchRequest(): GenerateWorldRequest {
  return create(GenerateWorldRequestSchema, { gameId: "bench-game", viewport: { width: 480, height: 640 }, seed: EASY_SEED });
}

/** A stand-in WorldGen whose GenerateWorld returns the same tiny world every time. */
export function stubWorldGen(): ServiceImpl<typeof WorldGenService> {
  const response = create(GenerateWorldResponseSchema, {
    world: { seed: 1n, viewport: { width: 4, height: 19 }, pipeSpacing: 1, pipes: [{ gapStart: 1, gapHeight: 1 }] },
  });
  return { generateWorld: () => response };
}

export function worldGenFor(workload: Workload): ServiceImpl<typeof WorldGenService> {
  return workload === "trivial" ? stubWorldGen() : createWorldGen();
}

/** Every component in one process group "all", calls between them in `mode`. */
export function inProcessTopology(mode: "direct" | "serialized"): Topology {
  return parseTopology({
    name: `bench-${mode}`,
    inProcess: mode,
    groups: { all: { components: [...COMPONENT_NAMES], address: "127.0.0.1:1" } },
  });
}

/** The server process's topology: every component in group "server" (it listens on any free port). */
export function serverTopology(): Topology {
  return parseTopology({
    name: "bench-server",
    groups: { server: { components: [...COMPONENT_NAMES], address: "127.0.0.1:1" } },
  });
}

/** The client's view: the server group at `port`, this process as the empty group "bench". */
export function clientTopology(port: number, network: NetworkSettings): Topology {
  return parseTopology({
    name: "bench-client",
    network,
    groups: {
      server: { components: [...COMPONENT_NAMES], address: `127.0.0.1:${port}` },
      bench: { components: [], address: "127.0.0.1:2" },
    },
  });
}

export interface BenchKeys extends LocalIdentity {
  /** The credential a real GenerateWorld call carries: the initiator's, acting for the player "bench". */
  callerToken(): Promise<string>;
}

/** The keys in `dir` (created if missing): player and component credentials, and the verifier the runtime checks them with. */
export async function benchKeys(dir: string): Promise<BenchKeys> {
  const identity = await openLocalIdentity(join(dir, "identity"));
  return { ...identity, callerToken: async () => identity.serviceSigner.tokenFor("initiator", "worldgen", "bench") };
}

/** Music in its own group at `port`; the engine (and the rest) in group "engine". */
export function musicTopology(port: number): Topology {
  return parseTopology({
    name: "bench-music",
    groups: {
      music: { components: ["music"], address: `127.0.0.1:${port}` },
      engine: { components: ["auth", "initiator", "worldgen", "engine", "score"], address: "127.0.0.1:2" },
    },
  });
}
