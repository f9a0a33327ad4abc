import { join } from "node:path";
import { CloseCode, type SessionHandler, type StreamSession } from "@flaplab/game-protocol";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevCertificate, createStreamServer, loadOrCreateDevCertificate, loadWebTransport, type StreamServer } from "../src/index.js";
import { echoRoute, testPlayer } from "./fixtures.js";

let server: StreamServer;
let player: Awaited<ReturnType<typeof testPlayer>>;
let dir: string;
let token: string;
const sessions: StreamSession[] = [];

beforeAll(async () => {
  player = await testPlayer("alice");
  dir = player.dir;
  token = player.token;
  server = await createStreamServer({
    host: "127.0.0.1",
    port: 0,
    certificate: await createDevCertificate(),
    authorize: player.authorize,
    logger: pino({ level: "silent" }),
    routes: {
      "/echo": echoRoute(sessions),
    },
  });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await player?.remove();
});

async function open(query: string, path = "/echo") {
  const { lib } = await loadWebTransport();
  const wt = new lib.WebTransport(`https://127.0.0.1:${server.port}${path}?${query}`, {
    forceReliable: true,
    serverCertificateHashes: [{ algorithm: "sha-256", value: server.certificate.sha256 }],
  } as never);
  return wt;
}

describe("stream server", () => {
  it("authenticates a session, hands it to the route with its game id, and carries bytes both ways", async () => {
    const wt = await open(`gameId=g-1&token=${token}`);
    await wt.ready;
    const stream = await wt.createBidirectionalStream();
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    await writer.write(new TextEncoder().encode("hello"));
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe("alice:g-1:hello");
    expect(sessions.at(-1)?.kind).toBe("echo");

    await writer.write(new TextEncoder().encode("bye"));
    const info = await wt.closed;
    expect(info).toMatchObject({ closeCode: 4042, reason: "asked to leave" });
  });

  it("refuses a session with a bad token before accepting it", async () => {
    const wt = await open("gameId=g-2&token=not-a-token");
    const closed = wt.closed.catch((e: unknown) => e);
    await expect(wt.ready).rejects.toBeDefined();
    expect(await closed).toBeInstanceOf(Error);
    expect(server.openSessions).toBe(0);
  });

  it("refuses a session without a game id", async () => {
    const wt = await open(`token=${token}`);
    const closed = wt.closed.catch((e: unknown) => e);
    await expect(wt.ready).rejects.toBeDefined();
    expect(await closed).toBeInstanceOf(Error);
  });

  it("refuses an unknown path", async () => {
    const wt = await open(`gameId=g&token=${token}`, "/nope");
    const closed = wt.closed.catch((e: unknown) => e);
    await expect(wt.ready).rejects.toBeDefined();
    expect(await closed).toBeInstanceOf(Error);
  });

  it("keeps a certificate on disk and reuses it until it nears expiry", async () => {
    const a = await loadOrCreateDevCertificate(join(dir, "tls"));
    const b = await loadOrCreateDevCertificate(join(dir, "tls"));
    expect(Buffer.from(b.sha256).equals(Buffer.from(a.sha256))).toBe(true);
    expect(a.notAfter.getTime() - Date.now()).toBeLessThan(14 * 24 * 3600_000);
  });
});

describe("stream server limits and containment", () => {
  let limited: StreamServer;
  let lateSend: boolean | undefined;
  let bob: Awaited<ReturnType<typeof testPlayer>>;
  let tok: string;

  beforeAll(async () => {
    bob = await testPlayer("bob");
    tok = bob.token;
    limited = await createStreamServer({
      host: "127.0.0.1",
      port: 0,
      certificate: await createDevCertificate(),
      authorize: bob.authorize,
      logger: pino({ level: "silent" }),
      limits: { maxSessions: 2, idleTimeoutMs: 400, streamOpenTimeoutMs: 400 },
      routes: {
        "/quiet": { kind: "quiet", handler: () => undefined },
        "/throws": {
          kind: "throws",
          handler: () => {
            throw new Error("handler bug");
          },
        },
        "/rejects": { kind: "rejects", handler: (async () => Promise.reject(new Error("async handler bug"))) as unknown as SessionHandler },
        "/writes-late": {
          kind: "writes-late",
          handler: (session) => {
            session.close(4000, "bye");
            // Writing to a closed session neither throws nor reaches the client.
            lateSend = session.send(new Uint8Array([1, 2, 3]));
          },
        },
      },
    });
  }, 30_000);

  afterAll(async () => {
    await limited?.close();
    await bob?.remove();
  });

  async function session(path: string) {
    const { lib } = await loadWebTransport();
    const wt = new lib.WebTransport(`https://127.0.0.1:${limited.port}${path}?gameId=g&token=${tok}`, {
      forceReliable: true,
      serverCertificateHashes: [{ algorithm: "sha-256", value: limited.certificate.sha256 }],
    } as never);
    return wt;
  }

  it("closes a session that opens no stream, and one that goes idle: 4400", async () => {
    const none = await session("/quiet");
    await none.ready;
    expect(await none.closed).toMatchObject({ closeCode: CloseCode.Malformed, reason: "no stream opened" });

    const idle = await session("/quiet");
    await idle.ready;
    await idle.createBidirectionalStream();
    expect(await idle.closed).toMatchObject({ closeCode: CloseCode.Malformed, reason: "idle for 400 ms" });
  });

  it("refuses sessions beyond maxSessions, and admits again once one ends", async () => {
    const a = await session("/quiet");
    const b = await session("/quiet");
    await Promise.all([a.ready, b.ready]);
    const c = await session("/quiet");
    const cClosed = c.closed.catch((e: unknown) => e);
    await expect(c.ready).rejects.toBeDefined();
    await cClosed;
    a.close();
    b.close();
    for (let i = 0; i < 50 && limited.openSessions > 0; i++) await new Promise((r) => setTimeout(r, 20));
    const d = await session("/quiet");
    await d.ready;
    d.close();
  });

  it("a handler that throws or rejects ends its own session with 4500, and the server keeps serving", async () => {
    for (const path of ["/throws", "/rejects"]) {
      const wt = await session(path);
      await wt.ready;
      await wt.createBidirectionalStream();
      expect(await wt.closed).toMatchObject({ closeCode: CloseCode.Internal, reason: "internal error" });
    }
    const late = await session("/writes-late");
    await late.ready;
    await late.createBidirectionalStream();
    expect(await late.closed).toMatchObject({ closeCode: 4000, reason: "bye" });
    expect(lateSend).toBe(false);
    const ok = await session("/quiet");
    await ok.ready;
    ok.close();
  });
});
