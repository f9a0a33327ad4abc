// The RPC port below HTTP: raw connection bytes into the host's protocol sniffer (HTTP/1.1 or the
// h2c preface): HTTP/1.1 requests with lying lengths, bad chunking, odd request lines and headers;
// h2c prefaces with random frames; random bytes. Each in its own TCP connection, split into writes,
// then the client half-closes and the server must answer or close.
import net from "node:net";
import fc from "fast-check";
import { applyMutation, concatBytes, hex, mutations, randomBytes } from "../mutate.js";
import { accepted, clear, crash, type Target, type TargetContext, type Verdict } from "../runner.js";
import { SERVICES } from "./rpc.js";

interface RawCase {
  readonly bytes: Uint8Array;
  readonly cuts: readonly number[];
}

const paths = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SERVICES.flatMap((s) => s.methods.map((m) => `/${s.typeName}/${m.name}`))) },
  { weight: 2, arbitrary: fc.constantFrom("/healthz", "/", "*", "/healthz?x=1", "//flaplab.score.v1.ScoreService/GetScores", "/flaplab.score.v1.ScoreService/GetScores/../GetScores", "/%00", `/${"a".repeat(9000)}`) },
  { weight: 1, arbitrary: fc.webPath() },
);

const token = fc.constantFrom("Bearer x", "Bearer", "", "Basic Zm9vOmJhcg==", `Bearer ${"A".repeat(5000)}`);

const h1Request: fc.Arbitrary<Uint8Array> = fc
  .record({
    method: fc.oneof({ weight: 8, arbitrary: fc.constant("POST") }, { weight: 2, arbitrary: fc.constantFrom("GET", "OPTIONS", "PUT", "HEAD", "DELETE", "CONNECT", "PRI", "P", "") }),
    path: paths,
    version: fc.oneof({ weight: 8, arbitrary: fc.constant("HTTP/1.1") }, { weight: 2, arbitrary: fc.constantFrom("HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1 extra", "") }),
    contentType: fc.constantFrom("application/json", "application/proto", "application/grpc", "application/grpc-web+proto", "application/connect+json", "text/plain", ""),
    body: fc.oneof(fc.constantFrom("{}", '{"limit":5}', '{"username":"a","password":"b"}', "", "\u0000"), randomBytes(256).map((b) => Buffer.from(b).toString("latin1"))),
    length: fc.oneof(
      { weight: 6, arbitrary: fc.constant("right") },
      { weight: 1, arbitrary: fc.constantFrom("none", "chunked", "bad-chunked", "both", "negative", "huge", "twice", "more", "less") },
    ),
    extra: fc.array(fc.constantFrom(`authorization: ${"Bearer x"}`, "connection: close", "connection: upgrade, http2-settings", "upgrade: h2c", "http2-settings: AAMAAABkAAQAoAAAAAIAAAAA", "expect: 100-continue", "x-flaplab-caller: engine", "connect-timeout-ms: 1", "grpc-timeout: 1n", "te: trailers", "origin: http://evil.example", "host:", `x-big: ${"b".repeat(20000)}`, "bad header line", " folded: continuation"), { maxLength: 4 }),
    auth: token,
  })
  .map((r) => {
    const body = Buffer.from(r.body, "latin1");
    const head = [`${r.method} ${r.path} ${r.version}`, "host: 127.0.0.1", `content-type: ${r.contentType}`];
    if (r.auth) head.push(`authorization: ${r.auth}`);
    let payload: Buffer = body;
    switch (r.length) {
      case "right":
        head.push(`content-length: ${body.length}`);
        break;
      case "chunked":
        head.push("transfer-encoding: chunked");
        payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]);
        break;
      case "bad-chunked":
        head.push("transfer-encoding: chunked");
        payload = Buffer.concat([Buffer.from("fffffffffffffffff\r\n"), body]);
        break;
      case "both":
        head.push(`content-length: ${body.length}`, "transfer-encoding: chunked");
        break;
      case "negative":
        head.push("content-length: -1");
        break;
      case "huge":
        head.push("content-length: 99999999999999999999");
        break;
      case "twice":
        head.push(`content-length: ${body.length}`, `content-length: ${body.length + 1}`);
        break;
      case "more":
        head.push(`content-length: ${body.length + 10}`);
        break;
      case "less":
        head.push(`content-length: ${Math.max(0, body.length - 1)}`);
        break;
      case "none":
        break;
    }
    head.push(...r.extra);
    return concatBytes(Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), payload);
  });

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const h2Frame = fc
  .record({ type: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 255 })), flags: fc.integer({ min: 0, max: 255 }), stream: fc.oneof(fc.constantFrom(0, 1, 3, 2, 0x7fffffff), fc.nat()), payload: fc.uint8Array({ maxLength: 64 }), lie: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -8, max: 1 << 20 }) }) })
  .map(({ type, flags, stream, payload, lie }) => {
    const len = Math.max(0, Math.min(0xffffff, payload.length + lie));
    const head = Buffer.alloc(9);
    head.writeUIntBE(len, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(stream >>> 0, 5);
    return concatBytes(head, payload);
  });
const h2Bytes: fc.Arbitrary<Uint8Array> = fc.array(h2Frame, { maxLength: 5 }).map((fs) => concatBytes(H2_PREFACE, ...fs));

const rawCase: fc.Arbitrary<RawCase> = fc.record({
  bytes: fc.oneof(
    { weight: 4, arbitrary: h1Request },
    { weight: 3, arbitrary: fc.tuple(h1Request, mutations).map(([b, ms]) => ms.reduce(applyMutation, b)) },
    { weight: 2, arbitrary: h2Bytes },
    { weight: 1, arbitrary: fc.tuple(h2Bytes, mutations).map(([b, ms]) => ms.reduce(applyMutation, b)) },
    { weight: 1, arbitrary: randomBytes(512) },
  ),
  cuts: fc.array(fc.nat(), { maxLength: 3 }),
});

/** How long the server has to answer or close after the client's half-close. */
const CLOSE_MS = 1_500;

async function runRaw(c: RawCase, { server, signal }: TargetContext): Promise<Verdict> {
  const socket = net.connect({ host: "127.0.0.1", port: server.port });
  let error = "";
  socket.on("error", (err: Error) => (error ||= err.message));
  let received = Buffer.alloc(0);
  socket.on("data", (d: Buffer) => (received = Buffer.concat([received, d])));
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  const abort = () => socket.destroy();
  signal.addEventListener("abort", abort);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("close", () => reject(new Error(`connection closed before it opened: ${error}`)));
    });
    const cuts = [...new Set(c.cuts.map((x) => (c.bytes.length ? x % c.bytes.length : 0)))].sort((a, b) => a - b);
    let from = 0;
    for (const to of [...cuts, c.bytes.length]) {
      if (to > from && !socket.destroyed) socket.write(c.bytes.subarray(from, to));
      from = to;
    }
    socket.end();
    const gone = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), CLOSE_MS))]);
    if (!gone) {
      // Node's HTTP/2 session does not notice a client's FIN while a frame is incomplete: the server
      // keeps such an h2c connection like any idle one, until its idle timeout (FLAPLAB_IDLE_TIMEOUT_MS).
      if (Buffer.from(c.bytes.subarray(0, H2_PREFACE.length)).equals(H2_PREFACE)) return accepted("h2c connection with an incomplete frame kept until the idle timeout");
      return { kind: "hang", detail: `the server neither answered nor closed ${CLOSE_MS} ms after the client's half-close` };
    }
    if (error && received.length === 0 && !/ECONNRESET|EPIPE/.test(error)) return crash(`connection failed: ${error}`);
    const text = received.toString("latin1");
    // The final status (after any 100 Continue).
    const statuses = [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => m[1]!);
    const status = statuses.find((x) => !x.startsWith("1")) ?? statuses[0];
    if (status === undefined) {
      if (received.length > 0 && c.bytes.subarray(0, 3).toString() === "PRI") return clear("h2c frames, then closed");
      return clear(received.length === 0 ? "closed without an answer" : "closed after a non-HTTP answer");
    }
    const n = Number(status);
    if (n < 300) return accepted(`http ${n}`);
    if (n < 500) return clear(`http ${n}`);
    // A 5xx must carry a planned Connect error, not an exception.
    const code = /"code":"([a-z_]+)"/.exec(text)?.[1];
    if (code && code !== "internal" && code !== "unknown") return clear(`http ${n} ${code}`);
    return crash(`http ${n}: ${text.slice(0, 200)}`);
  } finally {
    signal.removeEventListener("abort", abort);
    socket.destroy();
  }
}

export const rawTarget: Target<RawCase> = {
  name: "rpc port raw bytes",
  remote: true,
  timeoutMs: 10_000,
  concurrency: 4,
  arbitrary: rawCase,
  run: runRaw,
  show: (c) => `cuts=${c.cuts.join(",")} bytes=${hex(c.bytes, 400)}`,
};
