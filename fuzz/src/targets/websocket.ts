// The real stream port: WebTransport's WebSocket mapping (HTTP/1.1 Upgrade over TLS, subprotocol
// webtransport_kDraft2, capsules in binary WebSocket frames). Two targets: raw WebSocket frames
// (any opcode, lengths that lie, unmasked, fragmented) and well-framed capsules carrying
// size-delimited game input (stream ids, flow control, close, varints of every width).
import { randomBytes as cryptoRandomBytes } from "node:crypto";
import http2 from "node:http2";
import tls from "node:tls";
import { create, toBinary } from "@bufbuild/protobuf";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import fc from "fast-check";
import { messageOf } from "../messages.js";
import { applyMutation, concatBytes, hex, leb128, mutations, randomBytes } from "../mutate.js";
import { accepted, clear, crash, type Target, type TargetContext, type Verdict } from "../runner.js";
import type { Credentials } from "../server.js";

const ENGINE_PATH = "/engine/v1/game";
const MUSIC_PATH = "/music/v1/music";

/** Capsule types of the WebTransport-over-HTTP/2 draft the library speaks. */
export const CAPSULE = {
  PADDING: 0x190b4d38,
  RESET_STREAM: 0x190b4d39,
  STOP_SENDING: 0x190b4d3a,
  STREAM: 0x190b4d3b,
  STREAM_FIN: 0x190b4d3c,
  MAX_DATA: 0x190b4d3d,
  MAX_STREAM_DATA: 0x190b4d3e,
  MAX_STREAMS_BIDI: 0x190b4d3f,
  MAX_STREAMS_UNIDI: 0x190b4d40,
  DATA_BLOCKED: 0x190b4d41,
  STREAM_DATA_BLOCKED: 0x190b4d42,
  STREAMS_BLOCKED_UNIDI: 0x190b4d43,
  STREAMS_BLOCKED_BIDI: 0x190b4d44,
  CLOSE_SESSION: 0x2843,
  DRAIN_SESSION: 0x78ae,
  DATAGRAM: 0x00,
} as const;

/** A QUIC variable-length integer (2-bit length prefix), in the shortest form or a longer one. */
export function quicVarint(n: number | bigint, width?: 1 | 2 | 4 | 8): Uint8Array {
  const v = BigInt(n);
  const w = width ?? (v < 64n ? 1 : v < 16384n ? 2 : v < 2n ** 30n ? 4 : 8);
  const out = new Uint8Array(w);
  let x = v;
  for (let i = w - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  out[0] = (out[0]! & 0x3f) | ({ 1: 0, 2: 0x40, 4: 0x80, 8: 0xc0 }[w] as number);
  return out;
}

export interface WsFrame {
  readonly fin: boolean;
  readonly rsv: number;
  readonly opcode: number;
  /** undefined: unmasked (a protocol error for a client). */
  readonly mask: Uint8Array | undefined;
  /** Length field form: natural, or forced 16/64-bit; `lie` adds to the declared length. */
  readonly lengthForm: "natural" | "16" | "64";
  readonly lie: number;
  readonly payload: Uint8Array;
}

/** The bytes of a client WebSocket frame. */
export function wsFrame(f: WsFrame): Uint8Array {
  const declared = Math.max(0, f.payload.length + f.lie);
  const head: number[] = [(f.fin ? 0x80 : 0) | ((f.rsv & 7) << 4) | (f.opcode & 0x0f)];
  const maskBit = f.mask ? 0x80 : 0;
  const form = f.lengthForm === "natural" ? (declared < 126 ? "7" : declared < 65536 ? "16" : "64") : f.lengthForm;
  if (form === "7") head.push(maskBit | declared);
  else if (form === "16") head.push(maskBit | 126, (declared >> 8) & 0xff, declared & 0xff);
  else {
    head.push(maskBit | 127);
    const big = BigInt(declared);
    for (let i = 7; i >= 0; i--) head.push(Number((big >> BigInt(8 * i)) & 0xffn));
  }
  const body = f.payload.slice();
  if (f.mask) for (let i = 0; i < body.length; i++) body[i]! ^= f.mask[i % 4]!;
  return concatBytes(Uint8Array.from(head), f.mask ?? new Uint8Array(0), body);
}

const binaryFrame = (payload: Uint8Array, mask: Uint8Array): WsFrame => ({ fin: true, rsv: 0, opcode: 2, mask, lengthForm: "natural", lie: 0, payload });

/** A capsule as the WebSocket mapping carries it: type varint, then the body (length implied by the frame). */
const capsule = (type: number, body: Uint8Array, width?: 1 | 2 | 4 | 8): Uint8Array => concatBytes(quicVarint(type, width), body);

const delimitedInput = (seq: number, t = 1000): Uint8Array => {
  const body = toBinary(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: t }));
  return concatBytes(leb128(BigInt(body.length)), body);
};

// ---- case generators --------------------------------------------------------------------------

/** `ticket`: the fresh game's stream ticket (what a browser sends); `other-ticket`: another game's. */
type TokenKind = keyof Credentials | "ticket" | "other-ticket" | "none" | "garbage";

interface Session {
  readonly path: string;
  readonly game: "fresh" | "none" | "bogus";
  readonly token: TokenKind;
  readonly subprotocol: string;
}

const session: fc.Arbitrary<Session> = fc.record({
  path: fc.oneof({ weight: 8, arbitrary: fc.constant(ENGINE_PATH) }, { weight: 2, arbitrary: fc.constant(MUSIC_PATH) }, { weight: 1, arbitrary: fc.constantFrom("/", "/engine/v1/game/../x", "//engine/v1/game", "/nope") }),
  game: fc.constantFrom<Session["game"]>("fresh", "fresh", "fresh", "none", "bogus"),
  token: fc.constantFrom<TokenKind>("ticket", "ticket", "ticket", "ticket", "ticket", "other-ticket", "player", "none", "expired", "forged", "engine", "garbage"),
  subprotocol: fc.oneof({ weight: 10, arbitrary: fc.constant("webtransport_kDraft2") }, { weight: 1, arbitrary: fc.constantFrom("webtransport_kDraft1", "webtransport_kDraft9", "webtransport", "chat", "webtransport_kDraft2_x, webtransport_kDraft2") }),
});

const mask = fc.uint8Array({ minLength: 4, maxLength: 4 });

const anyFrame: fc.Arbitrary<WsFrame> = fc.record({
  fin: fc.boolean(),
  rsv: fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 7 }) }),
  opcode: fc.oneof({ weight: 6, arbitrary: fc.constant(2) }, { weight: 4, arbitrary: fc.integer({ min: 0, max: 15 }) }),
  mask: fc.oneof({ weight: 9, arbitrary: mask }, { weight: 1, arbitrary: fc.constant(undefined) }),
  lengthForm: fc.constantFrom<WsFrame["lengthForm"]>("natural", "natural", "natural", "16", "64"),
  lie: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: -8, max: 8 }) }, { weight: 1, arbitrary: fc.constantFrom(70000, 2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER) }),
  payload: fc.oneof(randomBytes(512), fc.uint8Array({ minLength: 1, maxLength: 3 })),
});

export interface WsCase {
  readonly session: Session;
  /** Bytes after the upgrade, and the points where they are split into writes. */
  readonly bytes: Uint8Array;
  readonly cuts: readonly number[];
}

/** Raw WebSocket frames, whole or mutated. */
const framesCase: fc.Arbitrary<WsCase> = fc.record({
  session,
  bytes: fc.oneof(
    { weight: 5, arbitrary: fc.array(anyFrame, { minLength: 1, maxLength: 4 }).map((fs) => concatBytes(...fs.map(wsFrame))) },
    { weight: 3, arbitrary: fc.tuple(fc.array(anyFrame, { minLength: 1, maxLength: 3 }), mutations).map(([fs, ms]) => ms.reduce(applyMutation, concatBytes(...fs.map(wsFrame)))) },
    { weight: 2, arbitrary: randomBytes(1024) },
  ),
  cuts: fc.array(fc.nat(), { maxLength: 3 }),
});

const capsuleTypes = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...Object.values(CAPSULE)) },
  { weight: 1, arbitrary: fc.nat({ max: 2 ** 30 - 1 }) },
);
const width = fc.constantFrom<1 | 2 | 4 | 8 | undefined>(undefined, undefined, undefined, 2, 4, 8);
/** The library numbers the client's streams odd (1: its first bidirectional stream); even ids are the server's. */
const CLIENT_STREAM = 1;
const streamId = fc.oneof({ weight: 6, arbitrary: fc.constant(CLIENT_STREAM) }, { weight: 3, arbitrary: fc.constantFrom(0, 2, 3, 4, 5, 8, 2 ** 30 - 1) }, { weight: 1, arbitrary: fc.nat({ max: 2 ** 30 - 1 }) });

/** Game input as the client writes it on its stream: valid, mutated, or junk. */
const streamData: fc.Arbitrary<Uint8Array> = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }).map((seqs) => concatBytes(...seqs.map((s) => delimitedInput(s)))) },
  { weight: 3, arbitrary: fc.tuple(fc.array(messageOf(ClientInputSchema), { minLength: 1, maxLength: 4 }), mutations).map(([ms, mu]) => mu.reduce(applyMutation, concatBytes(...ms.map((m) => { const b = toBinary(ClientInputSchema, m); return concatBytes(leb128(BigInt(b.length)), b); })))) },
  { weight: 2, arbitrary: randomBytes(300) },
  { weight: 1, arbitrary: fc.tuple(fc.bigInt({ min: 300n, max: 2n ** 40n }), fc.uint8Array({ maxLength: 20 })).map(([n, b]) => concatBytes(leb128(n), b)) },
);

const capsuleBody: fc.Arbitrary<{ type: number; w: 1 | 2 | 4 | 8 | undefined; body: Uint8Array }> = fc.oneof(
  // stream data
  { weight: 6, arbitrary: fc.record({ type: fc.constantFrom(CAPSULE.STREAM, CAPSULE.STREAM_FIN), w: width, body: fc.tuple(streamId, width, streamData).map(([id, w, d]) => concatBytes(quicVarint(id, w), d)) }) },
  // control capsules with varint fields, some absent or cut short
  { weight: 3, arbitrary: fc.record({ type: capsuleTypes, w: width, body: fc.array(fc.tuple(fc.oneof(fc.nat({ max: 2 ** 30 - 1 }), fc.constantFrom(0, 1, 2 ** 30 - 1)), width), { maxLength: 3 }).map((vs) => concatBytes(...vs.map(([v, w]) => quicVarint(v, w)))) }) },
  // close with a code and a reason
  { weight: 1, arbitrary: fc.record({ type: fc.constant(CAPSULE.CLOSE_SESSION), w: width, body: fc.tuple(fc.nat({ max: 0xffffffff }), fc.string({ maxLength: 40 })).map(([code, reason]) => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, code); return concatBytes(b, new TextEncoder().encode(reason)); }) }) },
  // a varint cut off in the middle (the frame ends inside the type or the stream id)
  { weight: 1, arbitrary: fc.record({ type: fc.constant(-1), w: fc.constant(undefined), body: fc.constantFrom(Uint8Array.of(0x40), Uint8Array.of(0x80, 0x00), Uint8Array.of(0xc0, 1, 2), Uint8Array.of(0x99, 0x0b)) }) },
);

/** Well-framed (masked, binary) capsules: the first one usually opens the game's stream properly. */
const capsulesCase: fc.Arbitrary<WsCase> = fc.record({
  session,
  bytes: fc
    .tuple(fc.boolean(), fc.array(fc.tuple(capsuleBody, mask, fc.boolean()), { minLength: 1, maxLength: 5 }), mask)
    .map(([opening, caps, m]) =>
      concatBytes(
        ...(opening ? [wsFrame(binaryFrame(capsule(CAPSULE.STREAM, concatBytes(quicVarint(CLIENT_STREAM), delimitedInput(1))), m))] : []),
        ...caps.map(([c, cm, fin]) => wsFrame({ ...binaryFrame(c.type < 0 ? c.body : capsule(c.type, c.body, c.w), cm), fin: fin || c.type < 0 })),
      ),
    ),
  cuts: fc.array(fc.nat(), { maxLength: 3 }),
});

// ---- running a case against the stream port ---------------------------------------------------

/** How long the server has to react to what was sent before the client closes. */
const GRACE_MS = 25;
/** How long the server has to close after the client did. */
const CLOSE_MS = 3_000;

/** The game id and the token of a session's URL. */
async function sessionQuery(s: Session, server: TargetContext["server"]): Promise<URLSearchParams> {
  const game = s.game === "fresh" ? await server.newGame() : undefined;
  const gameId = s.game === "fresh" ? (game?.id ?? "no-game") : s.game === "bogus" ? "bogus-game" : undefined;
  let token: string | undefined;
  if (s.token === "ticket") token = game?.ticket ?? (await server.newGame())?.ticket;
  else if (s.token === "other-ticket") token = (await server.newGame())?.ticket;
  else if (s.token === "garbage") token = "not-a-token";
  else if (s.token === "engine") token = server.credentials.engine.engine;
  else if (s.token === "player" || s.token === "expired" || s.token === "forged") token = server.credentials[s.token];
  // Under both names a stream URL has carried it: `ticket` (the stream ticket) and `token`.
  return new URLSearchParams({ ...(gameId ? { gameId } : {}), ...(token ? { ticket: token, token } : {}) });
}

/** What the server sent: WebSocket close frames and WebTransport close capsules, found in its frames. */
function serverCloses(buf: Buffer): string[] {
  const out: string[] = [];
  let o = 0;
  while (buf.length - o >= 2) {
    const op = buf[o]! & 0x0f;
    let len = buf[o + 1]! & 0x7f;
    let p = o + 2;
    if (len === 126) {
      if (buf.length - p < 2) break;
      len = buf.readUInt16BE(p);
      p += 2;
    } else if (len === 127) {
      if (buf.length - p < 8) break;
      len = Number(buf.readBigUInt64BE(p));
      p += 8;
    }
    if (buf.length - p < len) break;
    const payload = buf.subarray(p, p + len);
    if (op === 8) out.push(`websocket close ${payload.length >= 2 ? payload.readUInt16BE(0) : "(no code)"}`);
    // 0x2843 as a 2-byte QUIC varint: 0x68 0x43
    if (op === 2 && payload[0] === 0x68 && payload[1] === 0x43 && payload.length >= 6) {
      out.push(`close ${payload.readUInt32BE(2)} "${payload.subarray(6).toString("utf8").slice(0, 60)}"`);
    }
    o = p + len;
  }
  return out;
}

async function runWs(c: WsCase, { server, signal }: TargetContext): Promise<Verdict> {
  const query = await sessionQuery(c.session, server);
  const socket = tls.connect({ host: "127.0.0.1", port: server.streamPort, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] });
  let error = "";
  socket.on("error", (err: Error) => (error ||= err.message));
  let received = Buffer.alloc(0);
  let ended = false;
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.on("data", (d: Buffer) => (received = Buffer.concat([received, d])));
  socket.on("end", () => (ended = true));
  const abort = () => socket.destroy();
  signal.addEventListener("abort", abort);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("secureConnect", resolve);
      socket.once("close", () => reject(new Error(`TLS connection closed before the handshake${error ? `: ${error}` : ""}`)));
    });
    socket.write(
      `GET ${c.session.path}?${query} HTTP/1.1\r\nHost: 127.0.0.1:${server.streamPort}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${cryptoRandomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${c.session.subprotocol}\r\n\r\n`,
    );
    // The upgrade answer.
    const headEnd = await waitFor(() => (received.indexOf("\r\n\r\n") >= 0 ? received.indexOf("\r\n\r\n") : ended ? -1 : undefined), closed, 3_000);
    if (headEnd === undefined || headEnd === -1) return error ? crash(`connection failed at the upgrade: ${error}`) : clear("connection closed at the upgrade");
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received.subarray(0, headEnd).toString("latin1"))?.[1] ?? 0);
    if (status !== 101) return status >= 400 ? clear(`http ${status}`) : clear(`http ${status} (not an upgrade)`);
    received = received.subarray(headEnd + 4);
    // The case's bytes, split into writes.
    const cuts = [...new Set(c.cuts.map((x) => (c.bytes.length ? x % c.bytes.length : 0)))].sort((a, b) => a - b);
    let from = 0;
    for (const to of [...cuts, c.bytes.length]) {
      if (to > from && !socket.destroyed) socket.write(c.bytes.subarray(from, to));
      from = to;
    }
    // Until the server closes, sends a close, or the grace is over.
    await Promise.race([
      closed,
      new Promise((r) => setTimeout(r, GRACE_MS)),
      new Promise<void>((r) => {
        const check = () => {
          if (serverCloses(received).length > 0) {
            socket.off("data", check);
            r();
          }
        };
        socket.on("data", check);
        check();
      }),
    ]);
    const closes = serverCloses(received);
    if (socket.destroyed || ended || closes.length > 0) {
      socket.destroy();
      return clear(closes[closes.length - 1] ?? "connection closed by the server");
    }
    // The server kept the session: the input was valid, or an incomplete frame it waits for.
    socket.end(wsFrame({ fin: true, rsv: 0, opcode: 8, mask: Uint8Array.of(1, 2, 3, 4), lengthForm: "natural", lie: 0, payload: Uint8Array.of(0x03, 0xe8) }));
    const gone = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), CLOSE_MS))]);
    if (!gone) return { kind: "hang", detail: `the server kept the connection ${CLOSE_MS} ms after the client closed it` };
    return accepted("kept open until the client closed");
  } finally {
    signal.removeEventListener("abort", abort);
    socket.destroy();
  }
}

/** Polls `probe` on each data event until it gives a value, the socket closes, or time runs out. */
async function waitFor<T>(probe: () => T | undefined, closed: Promise<void>, ms: number): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  let done = false;
  void closed.then(() => (done = true));
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (done || Date.now() > deadline) return probe();
    await new Promise((r) => setTimeout(r, 2));
  }
}

// ---- WebTransport over HTTP/2: extended CONNECT, then capsules (type, length, body) in DATA ------

/** Capsules as HTTP/2 carries them: type varint, length varint (that may lie), body; mutated at times. */
const h2CapsulesCase: fc.Arbitrary<WsCase> = fc.record({
  session,
  bytes: fc
    .tuple(
      fc.boolean(),
      fc.array(fc.tuple(capsuleBody, fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: -4, max: 64 }) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 30, 2 ** 62 - 1) })), { minLength: 1, maxLength: 5 }),
      fc.option(mutations, { freq: 3 }),
    )
    .map(([opening, caps, ms]) => {
      const h2capsule = (type: number, body: Uint8Array, w?: 1 | 2 | 4 | 8, lie = 0) =>
        concatBytes(quicVarint(type, w), quicVarint(Math.max(0, body.length + lie)), body);
      const bytes = concatBytes(
        ...(opening ? [h2capsule(CAPSULE.STREAM, concatBytes(quicVarint(CLIENT_STREAM), delimitedInput(1)))] : []),
        ...caps.map(([c, lie]) => (c.type < 0 ? c.body : h2capsule(c.type, c.body, c.w, lie))),
      );
      return ms ? ms.reduce(applyMutation, bytes) : bytes;
    }),
  cuts: fc.array(fc.nat(), { maxLength: 3 }),
});

async function runH2(c: WsCase, { server, signal }: TargetContext): Promise<Verdict> {
  const query = await sessionQuery(c.session, server);
  const client = http2.connect(`https://127.0.0.1:${server.streamPort}`, { rejectUnauthorized: false });
  let error = "";
  client.on("error", (err: Error) => (error ||= err.message));
  const abort = () => client.destroy();
  signal.addEventListener("abort", abort);
  try {
    const settings = await new Promise<http2.Settings | undefined>((resolve) => {
      client.once("remoteSettings", resolve);
      client.once("close", () => resolve(undefined));
    });
    // A refused or reset connection is no answer (the runner then checks whether the server died).
    if (!settings) return error ? crash(`connection failed before its settings: ${error}`) : clear("connection closed before its settings");
    if (!settings.enableConnectProtocol) return clear("no extended CONNECT offered");
    const stream = client.request({ ":method": "CONNECT", ":protocol": "webtransport", ":scheme": "https", ":path": `${c.session.path}?${query}`, ":authority": "127.0.0.1", origin: "https://127.0.0.1" });
    stream.on("error", () => undefined);
    let ended = false;
    let received = Buffer.alloc(0);
    stream.on("data", (d: Buffer) => (received = Buffer.concat([received, d])));
    const closed = new Promise<void>((r) => stream.once("close", () => {
      ended = true;
      r();
    }));
    stream.once("end", () => (ended = true));
    const status = await Promise.race([
      new Promise<number>((r) => stream.once("response", (h) => r(Number(h[":status"] ?? 0)))),
      closed.then(() => -1),
      new Promise<number>((r) => setTimeout(() => r(-2), 3_000)),
    ]);
    if (status === -1) return clear(`stream reset before a response (code ${stream.rstCode})`);
    if (status === -2) return { kind: "hang", detail: "no answer to the CONNECT within 3 s" };
    if (status !== 200) return clear(`http ${status}`);
    const cuts = [...new Set(c.cuts.map((x) => (c.bytes.length ? x % c.bytes.length : 0)))].sort((a, b) => a - b);
    let from = 0;
    for (const to of [...cuts, c.bytes.length]) {
      if (to > from && !stream.destroyed) stream.write(c.bytes.subarray(from, to));
      from = to;
    }
    await Promise.race([closed, new Promise((r) => setTimeout(r, GRACE_MS))]);
    // a close capsule: type 0x2843 (2-byte varint 0x68 0x43), a length, a 4-byte code
    const at = received.indexOf(Buffer.from([0x68, 0x43]));
    if (at >= 0 && received.length >= at + 7) return clear(`close ${received.readUInt32BE(at + 3)}`);
    if (ended || stream.destroyed || client.destroyed) return clear(`stream closed by the server${stream.rstCode ? ` (RST ${stream.rstCode})` : ""}`);
    return accepted("kept open until the client closed");
  } finally {
    signal.removeEventListener("abort", abort);
    client.destroy();
  }
}

function wsTarget(name: string, arbitrary: fc.Arbitrary<WsCase>, run = runWs): Target<WsCase> {
  return {
    name,
    remote: true,
    timeoutMs: 10_000,
    concurrency: 4,
    arbitrary,
    run,
    show: (c) => `${JSON.stringify(c.session)} cuts=${c.cuts.join(",")} bytes=${hex(c.bytes, 400)}`,
  };
}

export function websocketTargets(): Target<WsCase>[] {
  return [
    wsTarget("stream websocket frames", framesCase),
    wsTarget("stream websocket capsules", capsulesCase),
    wsTarget("stream http2 capsules", h2CapsulesCase, runH2),
  ];
}
