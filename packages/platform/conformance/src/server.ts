import { createHost, type Host } from "@flaplab/host";
import type { Logger } from "pino";
import { ConformanceService } from "./gen/connectrpc/conformance/v1/service_pb.js";
import type { ServerCompatRequest } from "./gen/connectrpc/conformance/v1/server_compat_pb.js";
import { conformanceUnaryImpl } from "./service.js";

export interface ServerUnderTest {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The conformance service's unary methods on @flaplab/host, on a free loopback port: the same
 * code path a process group's components are served by (the host's Connect, gRPC and gRPC-Web
 * handling, admission control, the dual-protocol server). One port serves HTTP/1.1 and h2c, so
 * the requested HTTP version needs nothing more; TLS is refused (the host serves TLS nowhere).
 */
export async function startServerUnderTest(request: ServerCompatRequest, logger: Logger): Promise<ServerUnderTest> {
  if (request.useTls) throw new Error("the server under test serves no TLS (config/server.yaml says supportsTls: false)");
  const host: Host = await createHost({
    runtime: {
      topology: { name: "conformance" },
      group: { name: "conformance", address: "127.0.0.1:0" },
      mounted: [{ definition: { name: "conformance", service: ConformanceService }, impl: conformanceUnaryImpl() }],
    },
    logger,
    ...(request.messageReceiveLimit > 0 ? { readMaxBytes: request.messageReceiveLimit } : {}),
  });
  const port = await host.listen(0);
  return { host: "127.0.0.1", port, close: () => host.close() };
}
