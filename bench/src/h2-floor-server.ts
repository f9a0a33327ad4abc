// Child process: the floor of a gRPC hop in Node. node:http2's stream API (no compatibility layer)
// answers every call with the same encoded GenerateWorld answer (the bench seed's world, encoded
// once at start): what a call costs Node's HTTP/2 with no per-call work of FlapLab's. Prints
// "listening <port>"; exits when its stdin closes.
import { createServer, constants as h2 } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { GenerateWorldResponseSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { generateWorld } from "@flaplab/worldgen";
import { EASY_SEED } from "./seed.js";

const spec = generateWorld(EASY_SEED, { width: 480, height: 640 });
const world = toBinary(GenerateWorldResponseSchema, create(GenerateWorldResponseSchema, { world: { ...spec, viewport: { ...spec.viewport } } }));
const answer = Buffer.alloc(5 + world.byteLength);
answer.writeUInt32BE(world.byteLength, 1);
answer.set(world, 5);

const server = createServer();
server.on("stream", (stream) => {
  stream.on("data", () => {});
  stream.once("end", () => {
    stream.respond({ [h2.HTTP2_HEADER_STATUS]: 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(answer);
  });
  stream.on("error", () => {});
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === "object" && address !== null ? address.port : 0}\n`);
});
process.stdin.once("end", () => process.exit(0));
process.stdin.resume();
