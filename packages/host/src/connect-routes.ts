import { Code, ConnectError, createConnectRouter, createContextValues, type ConnectRouter, type ConnectRouterOptions } from "@connectrpc/connect";
import { createLinkedAbortController, type UniversalHandler, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";
import { clientAddressKey } from "@flaplab/component";
import type { FastifyInstance } from "fastify";

export interface ConnectRoutesOptions extends ConnectRouterOptions {
  readonly routes: (router: ConnectRouter) => void;
  /** Calls still running this long after close starts are aborted. */
  readonly shutdownTimeoutMs: number;
}

/**
 * Mounts Connect, gRPC and gRPC-Web routes on Fastify, like @connectrpc/connect-fastify, with one
 * difference: a request body that is not valid protobuf is answered `invalid_argument` (the
 * client sent bad input) instead of Connect-ES's `internal`, in every protocol (gRPC-Web in the body's trailer frame).
 */
export async function registerConnectRoutes(root: FastifyInstance, opts: ConnectRoutesOptions): Promise<void> {
  // An encapsulated scope, so the content-type parsers below stay inside it.
  await root.register(async (app) => routesIn(app, opts));
}

function routesIn(app: FastifyInstance, opts: ConnectRoutesOptions): void {
  const shutdown = createLinkedAbortController();
  app.addHook("preClose", (done) => {
    setTimeout(() => shutdown.abort(new ConnectError("server is shutting down", Code.Unavailable)), opts.shutdownTimeoutMs).unref();
    done();
  });
  const router = createConnectRouter({ ...opts, shutdownSignal: shutdown.signal });
  opts.routes(router);
  // Connect reads request bodies itself.
  app.addContentTypeParser(/^application\/(connect\+|grpc|grpc-web)?(proto|json)?/, (_req, _payload, done) => done(null, undefined));
  app.addContentTypeParser(["application/json", "application/proto"], (_req, _payload, done) => done(null, undefined));
  for (const handler of router.handlers) {
    app.all(handler.requestPath, async (req, reply) => {
      try {
        // The caller's address, for handlers that limit per client (auth's login throttling).
        const values = createContextValues().set(clientAddressKey, req.raw.socket.remoteAddress);
        const res = await serve(handler, universalRequestFromNodeRequest(req.raw, reply.raw, undefined, values));
        for (const [key, value] of Object.entries(reply.getHeaders())) {
          if (value !== undefined) reply.raw.setHeader(key, value);
        }
        await universalResponseToNodeResponse(res, reply.raw);
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Aborted) {
          req.log.error({ err, rpc: `${handler.service.typeName}/${handler.method.name}` }, "rpc handler failed");
        }
      }
    });
  }
}

const PARSE_ERROR = /^\[internal\] parse binary: |^parse binary: /;

async function serve(handler: UniversalHandler, req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> {
  const res = await handler(req);
  // gRPC: the status travels in trailers.
  const grpcMessage = res.trailer?.get("grpc-message");
  if (res.trailer?.get("grpc-status") === String(Code.Internal) && grpcMessage && PARSE_ERROR.test(decodeURIComponent(grpcMessage))) {
    res.trailer.set("grpc-status", String(Code.InvalidArgument));
    return res;
  }
  // gRPC-Web: the status travels in the body's trailer frame (flag 0x80), after any messages.
  if (res.header?.get("content-type")?.startsWith("application/grpc-web") && res.body) {
    return { ...res, body: grpcWebParseErrorsAsInvalidArgument(res.body as AsyncIterable<Uint8Array>) };
  }
  // Connect unary: an error is a JSON body with a 500 status.
  if (res.status === 500 && res.header?.get("content-type") === "application/json" && res.body) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    const error = JSON.parse(bytes.toString("utf8")) as { code?: string; message?: string };
    if (error.code === "internal" && error.message && PARSE_ERROR.test(error.message)) {
      const body = Buffer.from(JSON.stringify({ code: "invalid_argument", message: error.message }));
      res.header.set("content-length", String(body.byteLength));
      return { ...res, status: 400, body: oneChunk(body) };
    }
    return { ...res, body: oneChunk(bytes) };
  }
  return res;
}

/** Passes a gRPC-Web body through, rewriting a trailer frame `grpc-status: 13` for a parse error to 3. */
async function* grpcWebParseErrorsAsInvalidArgument(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    if (chunk.length >= 5 && chunk[0] === 0x80 && new DataView(chunk.buffer, chunk.byteOffset).getUint32(1) === chunk.length - 5) {
      const text = Buffer.from(chunk.subarray(5)).toString("utf8");
      const message = /^grpc-message: (.*)$/m.exec(text)?.[1]?.trim();
      if (/^grpc-status: 13\r?$/m.test(text) && message && PARSE_ERROR.test(decodeURIComponent(message))) {
        const trailer = Buffer.from(text.replace(/^grpc-status: 13(\r?)$/m, `grpc-status: ${Code.InvalidArgument}$1`), "utf8");
        const frame = Buffer.alloc(5 + trailer.length);
        frame[0] = 0x80;
        frame.writeUInt32BE(trailer.length, 1);
        trailer.copy(frame, 5);
        yield frame;
        continue;
      }
    }
    yield chunk;
  }
}

async function* oneChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
