// The client under test for `connectconformance --mode client`: reads ClientCompatRequests
// (length-prefixed) from stdin until it closes, runs each with the runtime's networked clients
// (cases run concurrently, as the runner sends them), and writes one ClientCompatResponse per case
// to stdout. Exits when every case is answered, or at once on SIGTERM.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ConnectionPool, runCase } from "../src/client.js";
import { frame, unframe } from "../src/framing.js";
import { ClientCompatRequestSchema, ClientCompatResponseSchema, ClientErrorResultSchema } from "../src/gen/connectrpc/conformance/v1/client_compat_pb.js";

async function answer(input: Uint8Array, pool: ConnectionPool): Promise<void> {
  const req = fromBinary(ClientCompatRequestSchema, input);
  const res = create(ClientCompatResponseSchema, { testName: req.testName });
  try {
    res.result = { case: "response", value: await runCase(req, pool) };
  } catch (err) {
    res.result = { case: "error", value: create(ClientErrorResultSchema, { message: err instanceof Error ? err.message : String(err) }) };
  }
  process.stdout.write(frame(toBinary(ClientCompatResponseSchema, res)));
}

async function main(): Promise<void> {
  const pool = new ConnectionPool();
  process.once("SIGTERM", () => process.exit(0));
  const running: Promise<void>[] = [];
  for await (const input of unframe(process.stdin)) running.push(answer(input, pool));
  await Promise.all(running);
  pool.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`client under test failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
