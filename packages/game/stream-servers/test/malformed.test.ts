// Raw bytes against the real stream server over real sockets: refused requests get their HTTP
// status before any upgrade, and a malformed WebSocket frame or capsule closes its own connection
// while the server goes on serving good sessions.
import { connect as h2connect, type ClientHttp2Session } from "node:http2";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chunksOf } from "@flaplab/game-protocol";
import { openRawTls, type RawTlsConnection } from "@flaplab/testkit";
import { createSigner, createVerifier, loadOrCreateKeys } from "@flaplab/identity";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevCertificate, createStreamServer, loadWebTransport, tokenAuthorizer, type StreamServer } from "../src/index.js";

let server: StreamServer;
let dir: string;
let token: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-streams-raw-"));
  const keys = await loadOrCreateKeys(dir);
  token = (await createSigner({ privateKey: keys.privateKey }).sign("alice")).token;
  server = await createStreamServer({
    host: "127.0.0.1",
    port: 0,
    certificate: await createDevCertificate(),
    authorize: tokenAuthorizer(createVerifier({ publicKey: keys.publicKey })),
    logger: pino({ level: "silent" }),
    limits: { handshakeTimeoutMs: 500 },
    routes: {
      "/echo": {
        kind: "echo",
        handler: (session) => {
          void (async () => {
            for await (const chunk of chunksOf(session)) session.send(chunk);
          })();
        },
      },
    },
  });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");

const tls = (): Promise<RawTlsConnection> => openRawTls(server.port);

/** A WebSocket upgrade for the WebTransport mapping; returns the connection and the status line. */
async function upgrade(path: string): Promise<{ conn: RawTlsConnection; status: number }> {
  const conn = await tls();
  conn.socket.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: webtransport_kDraft2\r\n\r\n`,
  );
  const deadline = Date.now() + 5000;
  while (!conn.received().includes("\r\n\r\n")) {
    if (Date.now() > deadline) throw new Error("no answer to the upgrade");
    if (await conn.closedWithin(20)) break;
  }
  const head = conn.received().toString("latin1");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { conn, status };
}

/** A good session through the library's own client: the server still serves. */
async function echoWorks(): Promise<boolean> {
  const { lib } = await loadWebTransport();
  const wt = new lib.WebTransport(`https://127.0.0.1:${server.port}/echo?gameId=g-ok&token=${token}`, {
    forceReliable: true,
    serverCertificateHashes: [{ algorithm: "sha-256", value: server.certificate.sha256 }],
  } as never);
  await wt.ready;
  const stream = await wt.createBidirectionalStream();
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  await writer.write(new TextEncoder().encode("still here"));
  const { value } = await reader.read();
  wt.close();
  return new TextDecoder().decode(value) === "still here";
}

describe("the stream port refuses before the upgrade", () => {
  it("answers a garbage token with 401 and closes, without a session", async () => {
    const { conn, status } = await upgrade("/echo?gameId=g-1&token=garbage");
    expect(status).toBe(401);
    expect(await conn.closedWithin(3000)).toBe(true);
    expect(server.openSessions).toBe(0);
  });

  it("answers an unknown path with 404 and a missing game id with 400", async () => {
    expect((await upgrade(`/nope?gameId=g&token=${token}`)).status).toBe(404);
    expect((await upgrade(`/echo?token=${token}`)).status).toBe(400);
  });

  it("accepts a good token with 101", async () => {
    const { conn, status } = await upgrade(`/echo?gameId=g-1&token=${token}`);
    expect(status).toBe(101);
    conn.socket.destroy();
  });

  it("drops a connection that never asks for a session (no TLS handshake, or nothing after it)", async () => {
    const conn = await tls();
    expect(await conn.closedWithin(3000)).toBe(true);
    const { connect } = await import("node:net");
    const raw = connect({ host: "127.0.0.1", port: server.port });
    raw.on("error", () => undefined);
    const closed = await new Promise<boolean>((r) => {
      const t = setTimeout(() => r(false), 3000);
      raw.on("close", () => {
        clearTimeout(t);
        r(true);
      });
    });
    expect(closed).toBe(true);
  });
});

// Each is sent after an accepted upgrade (good token), alone or followed by more bytes.
const WEBSOCKET_FRAMES: [string, string][] = [
  ["masked binary frame of 1 byte holding half of a 2-byte capsule type, then more bytes", "82 81 00000000 40 00 00"],
  ["the same with a non-zero mask", "82 81 a1b2c3d4 e1 b2 c3"],
  ["unmasked non-final frame with the same byte, then more", "02 01 40 00 00"],
  ["a stream capsule for an even (server-side) stream id 0", "82 85 00000000 99 0b 4d 3b 00"],
  ["a stream capsule for an even stream id with data after", "82 8a 00000000 99 0b 4d 3b 40 02 01 02 03 04"],
  ["a stream capsule whose stream id runs past the frame", "82 86 00000000 99 0b 4d 3b 80 00 00 00 00 00"],
  ["a close capsule shorter than its 4-byte code", "82 82 00000000 68 43"],
  ["a ping longer than 125 bytes", `89 fe 00 c8 00000000 ${"00".repeat(200)}`],
  ["a 64-bit length with its top bit set", `82 ff 80 00 00 00 00 00 00 01 00000000 ${"00".repeat(16)}`],
  ["a reserved opcode", "83 81 00000000 00"],
  ["a 4-byte capsule type in a 3-byte frame", "82 83 00000000 99 0b 4d 3b 00 00 00"],
];

describe("malformed WebSocket frames after a good upgrade", () => {
  it.each(WEBSOCKET_FRAMES)("%s: closes that connection, and the server serves a good session afterwards", async (_name, bytes) => {
    const { conn, status } = await upgrade(`/echo?gameId=g-ws&token=${token}`);
    expect(status).toBe(101);
    conn.socket.write(hex(bytes));
    expect(await conn.closedWithin(4000)).toBe(true);
    expect(await echoWorks()).toBe(true);
  });

  it("the frame sent in the same packet as the upgrade request is handled the same way", async () => {
    const conn = await tls();
    conn.socket.write(
      Buffer.concat([
        Buffer.from(
          `GET /echo?gameId=g-head&token=${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: webtransport_kDraft2\r\n\r\n`,
        ),
        hex("82 81 00000000 40 00 00"),
      ]),
    );
    expect(await conn.closedWithin(4000)).toBe(true);
    expect(await echoWorks()).toBe(true);
  });
});

async function connectCapsules(): Promise<{ client: ClientHttp2Session; stream: import("node:http2").ClientHttp2Stream; status: number }> {
  const client = h2connect(`https://127.0.0.1:${server.port}`, { rejectUnauthorized: false });
  client.on("error", () => undefined);
  await new Promise<void>((r) => client.once("remoteSettings", () => r()));
  const stream = client.request({
    ":method": "CONNECT",
    ":protocol": "webtransport",
    ":scheme": "https",
    ":authority": `127.0.0.1:${server.port}`,
    ":path": `/echo?gameId=g-h2&token=${token}`,
  }, { endStream: false });
  stream.on("error", () => undefined);
  const status = await new Promise<number>((r) => stream.once("response", (h) => r(Number(h[":status"]))));
  return { client, stream, status };
}

// Capsules over HTTP/2 (type, length, payload) after an accepted extended CONNECT.
const CAPSULES: [string, string][] = [
  ["a stream capsule for the even stream id 0", "99 0b 4d 3b 01 00"],
  ["a stream capsule whose stream id runs past its length", "99 0b 4d 3b 01 80 00 00 00"],
  ["a close capsule shorter than its code", "68 43 01 00"],
  ["a close capsule of length 0", "68 43 00"],
];

describe("malformed capsules over HTTP/2", () => {
  it.each(CAPSULES)("%s: closes that session, and the server serves a good session afterwards", async (_name, bytes) => {
    const { client, stream, status } = await connectCapsules();
    expect(status).toBe(200);
    const closed = new Promise<boolean>((r) => {
      const t = setTimeout(() => r(false), 4000);
      stream.once("close", () => {
        clearTimeout(t);
        r(true);
      });
    });
    stream.write(hex(bytes));
    expect(await closed).toBe(true);
    client.destroy();
    expect(await echoWorks()).toBe(true);
  });
});
