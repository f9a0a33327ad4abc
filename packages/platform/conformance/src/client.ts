import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { anyPack, anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient, type CallOptions } from "@connectrpc/connect";
import { closeConnections, openConnections, wireTransport, type Connections, type NetworkSettings } from "@flaplab/runtime";
import {
  ClientResponseResultSchema,
  type ClientCompatRequest,
  type ClientResponseResult,
} from "./gen/connectrpc/conformance/v1/client_compat_pb.js";
import { Codec, Compression, HTTPVersion, Protocol, StreamType } from "./gen/connectrpc/conformance/v1/config_pb.js";
import {
  ConformancePayloadSchema,
  ConformanceService,
  ErrorSchema,
  IdempotentUnaryRequestSchema,
  UnaryRequestSchema,
  UnimplementedRequestSchema,
  type Error as ProtoError,
} from "./gen/connectrpc/conformance/v1/service_pb.js";
import { appendProtoHeaders, toProtoHeaders } from "./headers.js";

/** Largest response a call accepts when the case sets no limit (the runtime's default). */
const DEFAULT_READ_MAX_BYTES = 1024 * 1024;

/** A case the client under test cannot run (outside what the runtime's clients do); reported as the case's error. */
export class UnsupportedCase extends Error {
  override readonly name = "UnsupportedCase";
}

/**
 * The runtime's network settings for a case's protocol, codec and HTTP version; the runtime's
 * clients send no compression, no TLS and no Connect GET, and only unary calls.
 */
export function networkOf(req: ClientCompatRequest): NetworkSettings {
  if (req.streamType !== StreamType.UNARY) throw new UnsupportedCase(`stream type ${StreamType[req.streamType]}: the runtime makes unary calls only`);
  if (req.compression !== Compression.IDENTITY && req.compression !== Compression.UNSPECIFIED) {
    throw new UnsupportedCase(`compression ${Compression[req.compression]}: the runtime sends none`);
  }
  if (req.serverTlsCert.byteLength > 0 || req.clientTlsCreds !== undefined) throw new UnsupportedCase("TLS: not part of this suite's configuration");
  if (req.useGetHttpMethod) throw new UnsupportedCase("Connect GET: the runtime always POSTs");
  if (req.rawRequest !== undefined) throw new UnsupportedCase("raw requests: the runtime's clients write their own");
  const protocol = ({ [Protocol.CONNECT]: "connect", [Protocol.GRPC]: "grpc", [Protocol.GRPC_WEB]: "grpc-web" } as const)[req.protocol as number];
  if (protocol === undefined) throw new UnsupportedCase(`protocol ${Protocol[req.protocol]}`);
  const httpVersion = ({ [HTTPVersion.HTTP_VERSION_1]: "1.1", [HTTPVersion.HTTP_VERSION_2]: "2" } as const)[req.httpVersion as number];
  if (httpVersion === undefined) throw new UnsupportedCase(`HTTP version ${HTTPVersion[req.httpVersion]}`);
  const format = ({ [Codec.PROTO]: "binary", [Codec.JSON]: "json" } as const)[req.codec as number];
  if (format === undefined) throw new UnsupportedCase(`codec ${Codec[req.codec]}`);
  return { protocol, httpVersion, format };
}

/** Connections of the runtime's kind, one set per server address, closed together. */
export class ConnectionPool {
  private readonly open = new Map<string, Connections>();
  get(baseUrl: string): Connections {
    let c = this.open.get(baseUrl);
    if (c === undefined) this.open.set(baseUrl, (c = openConnections(baseUrl)));
    return c;
  }
  close(): void {
    for (const c of this.open.values()) closeConnections(c);
    this.open.clear();
  }
}

/**
 * Runs one case with the runtime's networked clients (`wireTransport`: the same client a topology
 * edge with these network settings uses, without a default deadline) and reports what came back: headers, trailers, the
 * payload or the error.
 */
export async function runCase(req: ClientCompatRequest, pool: ConnectionPool): Promise<ClientResponseResult> {
  const network = networkOf(req);
  const baseUrl = `http://${req.host.includes(":") ? `[${req.host}]` : req.host}:${req.port}`;
  const transport = wireTransport({
    baseUrl,
    service: ConformanceService,
    network,
    connections: pool.get(baseUrl),
    readMaxBytes: req.messageReceiveLimit > 0 ? req.messageReceiveLimit : DEFAULT_READ_MAX_BYTES,
    // No default deadline: a case without a timeout expects none on the wire (the runtime's
    // networked edges always have one, their call timeout).
  });
  const client = createClient(ConformanceService, transport);
  const result = create(ClientResponseResultSchema);
  if (req.requestDelayMs > 0) await sleep(req.requestDelayMs);
  const abort = new AbortController();
  const headers = new Headers();
  appendProtoHeaders(headers, req.requestHeaders);
  const options: CallOptions = {
    headers,
    signal: abort.signal,
    ...(req.timeoutMs === undefined ? {} : { timeoutMs: req.timeoutMs }),
    onHeader: (h) => {
      result.responseHeaders = toProtoHeaders(h);
    },
    onTrailer: (t) => {
      result.responseTrailers = toProtoHeaders(t);
    },
  };
  const cancel = req.cancel?.cancelTiming;
  let cancelTimer: NodeJS.Timeout | undefined;
  if (cancel?.case === "beforeCloseSend") abort.abort();
  else if (cancel?.case === "afterCloseSendMs") cancelTimer = setTimeout(() => abort.abort(), cancel.value);
  try {
    switch (req.method) {
      case ConformanceService.method.unary.name: {
        const res = await client.unary(single(req, UnaryRequestSchema), options);
        result.payloads.push(res.payload ?? create(ConformancePayloadSchema));
        break;
      }
      case ConformanceService.method.idempotentUnary.name: {
        const res = await client.idempotentUnary(single(req, IdempotentUnaryRequestSchema), options);
        result.payloads.push(res.payload ?? create(ConformancePayloadSchema));
        break;
      }
      case ConformanceService.method.unimplemented.name:
        await client.unimplemented(single(req, UnimplementedRequestSchema), options);
        break;
      default:
        throw new UnsupportedCase(`method ${req.method ?? "(none)"}: not a unary method of the conformance service`);
    }
  } catch (err) {
    if (err instanceof UnsupportedCase) throw err;
    const e = ConnectError.from(err);
    result.error = protoErrorOf(e);
    // An error carries headers and trailers together as its metadata.
    if (result.responseHeaders.length === 0) result.responseHeaders = toProtoHeaders(e.metadata);
    result.responseTrailers = toProtoHeaders(e.metadata);
  } finally {
    clearTimeout(cancelTimer);
  }
  return result;
}

function single<T extends DescMessage>(req: ClientCompatRequest, schema: T): MessageShape<T> {
  const [only, ...rest] = req.requestMessages;
  if (only === undefined || rest.length > 0) throw new UnsupportedCase(`a unary call takes one request message, the case has ${req.requestMessages.length}`);
  const message = anyUnpack(only, schema);
  if (message === undefined) throw new UnsupportedCase(`the request message is a ${only.typeUrl}, not a ${schema.typeName}`);
  return message;
}

function protoErrorOf(e: ConnectError): ProtoError {
  const details: Any[] = e.details.map((d) =>
    "desc" in d ? anyPack(d.desc, create(d.desc, d.value)) : { $typeName: "google.protobuf.Any", typeUrl: `type.googleapis.com/${d.type}`, value: d.value },
  );
  return create(ErrorSchema, { code: e.code as number, message: e.rawMessage, details });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

