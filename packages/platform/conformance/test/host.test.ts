import { connect, type ClientHttp2Session } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { closeConnections, openConnections, wireTransport, type Connections, type NetworkSettings } from "@flaplab/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerCompatRequestSchema } from "../src/gen/connectrpc/conformance/v1/server_compat_pb.js";
import { ConformanceService, UnaryRequestSchema, type UnaryRequest } from "../src/gen/connectrpc/conformance/v1/service_pb.js";
import { startServerUnderTest, type ServerUnderTest } from "../src/server.js";

// The host serving the conformance service (the server under test), called by the runtime's
// clients: what the suite found wrong in either, kept right in the fast tier.
const LIMIT = 1024;
let server: ServerUnderTest;
let baseUrl: string;
let connections: Connections;

beforeAll(async () => {
  server = await startServerUnderTest(create(ServerCompatRequestSchema, { messageReceiveLimit: LIMIT }), pino({ level: "silent" }));
  baseUrl = `http://${server.host}:${server.port}`;
  connections = openConnections(baseUrl);
});

afterAll(async () => {
  closeConnections(connections);
  await server?.close();
});

function client(network: NetworkSettings) {
  return createClient(ConformanceService, wireTransport({ baseUrl, service: ConformanceService, network, connections, readMaxBytes: 4 * LIMIT }));
}

/** A Unary request whose encoding is exactly `size` bytes. */
function requestOfSize(size: number): UnaryRequest {
  let data = size;
  for (;;) {
    const req = create(UnaryRequestSchema, { requestData: new Uint8Array(data).fill(1) });
    const encoded = toBinary(UnaryRequestSchema, req).byteLength;
    if (encoded === size) return req;
    data += size - encoded;
  }
}

const JSON_NETWORKS: NetworkSettings[] = [
  { protocol: "connect", format: "json", httpVersion: "1.1" },
  { protocol: "connect", format: "json", httpVersion: "2" },
  { protocol: "grpc-web", format: "json", httpVersion: "1.1" },
  { protocol: "grpc", format: "json", httpVersion: "2" },
];

describe("JSON with a google.protobuf.Any in the answer", () => {
  it.each(JSON_NETWORKS)("is written by the host and read by the runtime's client: $protocol, HTTP/$httpVersion", async (network) => {
    const res = await client(network).unary({ responseDefinition: { response: { case: "responseData", value: new Uint8Array([1, 2]) } } });
    expect(res.payload?.data).toEqual(new Uint8Array([1, 2]));
    expect(res.payload?.requestInfo?.requests[0]?.typeUrl).toBe("type.googleapis.com/connectrpc.conformance.v1.UnaryRequest");
  });
});

describe("the message size limit of enveloped protocols", () => {
  const ENVELOPED: NetworkSettings[] = [
    { protocol: "grpc", format: "binary", httpVersion: "2" },
    { protocol: "grpc-web", format: "binary", httpVersion: "1.1" },
    { protocol: "grpc-web", format: "binary", httpVersion: "2" },
  ];

  it.each(ENVELOPED)("takes a message of exactly the limit and refuses one byte more: $protocol, HTTP/$httpVersion", async (network) => {
    await expect(client(network).unary(requestOfSize(LIMIT))).resolves.toBeDefined();
    const err = await client(network).unary(requestOfSize(LIMIT + 1)).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
  });
});

describe("raw gRPC calls", () => {
  let session: ClientHttp2Session;
  beforeAll(() => {
    session = connect(baseUrl);
  });
  afterAll(() => {
    session.close();
  });

  /** The grpc-status of one raw call (trailers, or headers when trailers-only). */
  function grpcStatus(headers: Record<string, string>, message: Uint8Array): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ":method": "POST", ":path": "/connectrpc.conformance.v1.ConformanceService/Unary", "content-type": "application/grpc", te: "trailers", ...headers });
      let status: string | undefined;
      stream.on("response", (h) => (status = h["grpc-status"] as string | undefined));
      stream.on("trailers", (t) => (status = t["grpc-status"] as string | undefined));
      stream.on("error", reject);
      stream.resume();
      stream.on("close", () => resolve(status));
      const body = Buffer.alloc(5 + message.byteLength);
      body.writeUInt32BE(message.byteLength, 1);
      body.set(message, 5);
      stream.end(body);
    });
  }

  it.each(["foo", "gzip"])("answers an encoding the host does not accept (%s) with unimplemented", async (encoding) => {
    expect(await grpcStatus({ "grpc-encoding": encoding }, new Uint8Array([0xff, 0xff, 0xff]))).toBe(String(Code.Unimplemented));
  });

  it("serves a deadline in microseconds (a handler sees whole milliseconds)", async () => {
    expect(await grpcStatus({ "grpc-timeout": "1999951u" }, toBinary(UnaryRequestSchema, create(UnaryRequestSchema)))).toBe("0");
  });
});
