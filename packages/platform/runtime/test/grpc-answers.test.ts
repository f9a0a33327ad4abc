import { constants, createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { GenerateWorldResponseSchema, WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeConnections, openConnections, wireTransport, type Connections } from "../src/index.js";

// The runtime's gRPC client (grpc-h2.ts) reading unusual answers, as Connect-ES's gRPC client reads
// them: a raw h2c server answers each call as the test case in its `x-answer` header says.
type Answer = (stream: ServerHttp2Stream) => void;

const envelope = (message: Uint8Array, flags = 0): Buffer => {
  const out = Buffer.alloc(5 + message.byteLength);
  out[0] = flags;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
};
const world = envelope(toBinary(GenerateWorldResponseSchema, create(GenerateWorldResponseSchema, { world: { seed: 7n } })));

const answers: Record<string, Answer> = {
  "trailers-only": (s) => s.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "9", "grpc-message": "no", "x-custom": "a" }, { endStream: true }),
  "status-in-headers-with-body": (s) => {
    s.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "9" });
    s.end(envelope(new Uint8Array(0)));
  },
  "not-grpc": (s) => {
    s.respond({ ":status": 200, "content-type": "image/jpeg" });
    s.end();
  },
  "no-status": (s) => {
    s.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    s.on("wantTrailers", () => s.sendTrailers({ "grpc-message": "error" }));
    s.end(world);
  },
  "two-messages": (s) => {
    s.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    s.on("wantTrailers", () => s.sendTrailers({ "grpc-status": "0" }));
    s.end(Buffer.concat([world, world]));
  },
  // A server enforcing the deadline itself, a little ahead of this side's timer (a 50 ms call).
  "reset-near-deadline": (s) => setTimeout(() => s.close(constants.NGHTTP2_CANCEL), 46),
  "reset-at-once": (s) => s.close(constants.NGHTTP2_CANCEL),
  ok: (s) => {
    s.respond({ ":status": 200, "content-type": "application/grpc+proto", "x-custom": "h" }, { waitForTrailers: true });
    s.on("wantTrailers", () => s.sendTrailers({ "grpc-status": "0", "x-trailer": "t" }));
    s.end(world);
  },
};

let server: Http2Server;
let connections: Connections;
let baseUrl: string;
const seenTimeouts: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer();
  server.on("stream", (stream, headers) => {
    seenTimeouts.push(headers["grpc-timeout"] as string | undefined);
    stream.resume();
    stream.on("end", () => answers[String(headers["x-answer"])]!(stream));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  connections = openConnections(baseUrl);
});

afterAll(async () => {
  closeConnections(connections);
  await new Promise((resolve) => server.close(resolve));
});

function call(answer: string, timeoutMs?: number) {
  const transport = wireTransport({ baseUrl, service: WorldGenService, network: { protocol: "grpc", format: "binary", httpVersion: "2" }, connections, readMaxBytes: 1024 });
  return createClient(WorldGenService, transport).generateWorld({ gameId: "g" }, { headers: { "x-answer": answer }, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

async function failure(answer: string, timeoutMs?: number): Promise<ConnectError> {
  try {
    await call(answer, timeoutMs);
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error(`the call answered "${answer}" succeeded`);
}

describe("the runtime's gRPC client reads answers as Connect-ES does", () => {
  it("reads a message with headers and trailers, and sends the call's deadline, or none", async () => {
    seenTimeouts.length = 0;
    const res = await call("ok", 2500);
    expect(res.world?.seed).toBe(7n);
    await call("ok");
    expect(seenTimeouts).toEqual(["2500m", undefined]);
  });

  it("takes a trailers-only answer's status and metadata from its headers, once", async () => {
    const err = await failure("trailers-only");
    expect([err.code, err.rawMessage]).toEqual([Code.FailedPrecondition, "no"]);
    expect(err.metadata.get("x-custom")).toBe("a");
  });

  it("ignores a status in the headers when a body follows: no trailers is an internal error", async () => {
    const err = await failure("status-in-headers-with-body");
    expect([err.code, err.rawMessage]).toEqual([Code.Internal, "protocol error: missing trailer"]);
  });

  it("answers a content type that is not gRPC with unknown", async () => {
    expect((await failure("not-grpc")).code).toBe(Code.Unknown);
  });

  it("refuses trailers without grpc-status (internal) and a second message (unimplemented)", async () => {
    expect((await failure("no-status")).rawMessage).toBe("protocol error: missing status");
    expect((await failure("no-status")).code).toBe(Code.Internal);
    const two = await failure("two-messages");
    expect([two.code, two.rawMessage]).toEqual([Code.Unimplemented, "protocol error: received extra output message for unary method"]);
  });

  it("takes a reset by the server at the call's deadline for the deadline, and an earlier one for a cancel", async () => {
    // The reset comes 46 ms or later into a 50 ms call: before this side's timer when the machine
    // is quiet (the case this covers), after it when busy (then it is the timer's deadline anyway).
    expect((await failure("reset-near-deadline", 50)).code).toBe(Code.DeadlineExceeded);
    expect((await failure("reset-at-once", 1000)).code).toBe(Code.Canceled);
  });
});
