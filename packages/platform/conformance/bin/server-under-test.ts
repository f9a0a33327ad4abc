// The server under test for `connectconformance --mode server`: reads one ServerCompatRequest
// (length-prefixed) from stdin, starts @flaplab/host with the conformance service, writes a
// ServerCompatResponse with its address to stdout, and stops on SIGTERM. Logs go to stderr.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { pino } from "pino";
import { frame, unframe } from "../src/framing.js";
import { ServerCompatRequestSchema, ServerCompatResponseSchema } from "../src/gen/connectrpc/conformance/v1/server_compat_pb.js";
import { startServerUnderTest } from "../src/server.js";

const logger = pino({ level: process.env["LOG_LEVEL"] ?? "warn" }, pino.destination(2));

async function main(): Promise<void> {
  let input: Uint8Array | undefined;
  for await (const message of unframe(process.stdin)) {
    input = message;
    break;
  }
  if (input === undefined) throw new Error("no ServerCompatRequest on stdin");
  const server = await startServerUnderTest(fromBinary(ServerCompatRequestSchema, input), logger);
  process.once("SIGTERM", () => {
    const forced = setTimeout(() => process.exit(0), 2000);
    forced.unref();
    void server.close().finally(() => process.exit(0));
  });
  process.stdout.write(frame(toBinary(ServerCompatResponseSchema, create(ServerCompatResponseSchema, { host: server.host, port: server.port }))));
}

main().catch((err: unknown) => {
  logger.fatal({ err }, "server under test failed to start");
  process.exit(1);
});
