import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { CloseCode, type StreamSession } from "@flaplab/game-protocol";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createWebSocketStreams, type WebSocketStreams } from "../src/index.js";
import { echoRoute, testPlayer } from "./fixtures.js";

let http: Server;
let streams: WebSocketStreams;
let player: Awaited<ReturnType<typeof testPlayer>>;
let token: string;
let base: string;
const sessions: StreamSession[] = [];

beforeAll(async () => {
  player = await testPlayer();
  token = player.token;
  streams = createWebSocketStreams({
    authorize: player.authorize,
    logger: pino({ level: "silent" }),
    limits: { maxSessions: 3 },
    maxMessageBytes: 1024,
    routes: {
      "/echo": echoRoute(sessions, "sendFrom"),
      "/throws": {
        kind: "echo",
        handler: () => {
          throw new Error("handler broke at once");
        },
      },
    },
  });
  http = createServer((_req, res) => res.end("plain"));
  http.on("upgrade", streams.handleUpgrade);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const address = http.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  base = `ws://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await streams?.close();
  await new Promise((r) => http?.close(r));
  await player?.remove();
});

function open(query: string, path = "/echo"): WebSocket {
  return new WebSocket(`${base}${path}?${query}`);
}

/** The HTTP status a refused upgrade got. */
function refusedWith(ws: WebSocket): Promise<number> {
  return new Promise((resolve, reject) => {
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("open", () => reject(new Error("the upgrade was accepted")));
    ws.on("error", () => undefined);
  });
}

function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
}

function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve) => ws.once("message", (data) => resolve(String(data))));
}

async function opened(ws: WebSocket): Promise<WebSocket> {
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return ws;
}

/** The server sees a close a moment after the client does. */
async function sessionsDownTo(n: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (streams.openSessions > n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  expect(streams.openSessions).toBe(n);
}

describe("WebSocket streams", () => {
  it("admits a session with its principal and game id and carries binary messages both ways", async () => {
    const ws = await opened(open(`gameId=g-1&token=${token}`));
    const reply = nextMessage(ws);
    ws.send(new TextEncoder().encode("hello"));
    expect(await reply).toBe("alice:g-1:hello");
    expect(sessions.at(-1)?.kind).toBe("echo");
    expect(streams.openSessions).toBe(1);
    const closed = closeOf(ws);
    ws.send(new TextEncoder().encode("bye"));
    expect(await closed).toEqual({ code: 4042, reason: "asked to leave" });
  });

  it("gives every session one shape: methods and bufferedBytes live on a shared prototype, not on each session", async () => {
    const a = await opened(open(`gameId=g-shape-1&token=${token}`));
    const first = sessions.at(-1) as StreamSession;
    const b = await opened(open(`gameId=g-shape-2&token=${token}`));
    const second = sessions.at(-1) as StreamSession;
    expect(second).not.toBe(first);
    expect(Object.getPrototypeOf(second)).toBe(Object.getPrototypeOf(first));
    expect(Object.getPrototypeOf(first)).not.toBe(Object.prototype);
    for (const key of ["bufferedBytes", "sendFrom", "send", "close", "read"]) {
      expect(Object.getOwnPropertyDescriptor(first, key), key).toBeUndefined();
    }
    expect(first.bufferedBytes).toBe(0);
    const closed = [closeOf(a), closeOf(b)];
    a.close(1000, "done");
    b.close(1000, "done");
    await Promise.all(closed);
    await sessionsDownTo(0);
  });

  it("maps the session's normal end (code 0) to 1000 and a client's 1000 back to 0", async () => {
    const ws = await opened(open(`gameId=g-2&token=${token}`));
    const closed = closeOf(ws);
    ws.send(new TextEncoder().encode("over"));
    expect(await closed).toEqual({ code: 1000, reason: "game over" });

    const ws2 = await opened(open(`gameId=g-3&token=${token}`));
    const session = sessions.at(-1) as StreamSession;
    ws2.close(1000, "bye");
    expect(await session.closed).toEqual({ code: 0, reason: "bye", by: "client" });
    expect(session.send(new Uint8Array([1]))).toBe(false);
  });

  it("refuses before the upgrade: unknown path 404, no game id 400, bad or missing token 401", async () => {
    expect(await refusedWith(open(`gameId=g&token=${token}`, "/nope"))).toBe(404);
    expect(await refusedWith(open(`token=${token}`))).toBe(400);
    expect(await refusedWith(open("gameId=g&token=not-a-token"))).toBe(401);
    expect(await refusedWith(open("gameId=g"))).toBe(401);
    expect(streams.openSessions).toBe(0);
  });

  it("refuses with 503 beyond maxSessions, and admits again once one has ended", async () => {
    const open3 = await Promise.all([1, 2, 3].map((i) => opened(open(`gameId=m-${i}&token=${token}`))));
    expect(streams.openSessions).toBe(3);
    expect(await refusedWith(open(`gameId=m-4&token=${token}`))).toBe(503);
    const closed = closeOf(open3[0] as WebSocket);
    (open3[0] as WebSocket).close(1000);
    await closed;
    await sessionsDownTo(2);
    const again = await opened(open(`gameId=m-5&token=${token}`));
    const rest = [...open3.slice(1), again];
    const allClosed = Promise.all(rest.map(closeOf));
    for (const ws of rest) ws.close(1000);
    await allClosed;
    await sessionsDownTo(0);
  });

  it("closes a session that sends text (4400) or a message over the limit, and keeps serving", async () => {
    const ws = await opened(open(`gameId=t-1&token=${token}`));
    const closed = closeOf(ws);
    ws.send("text, not binary");
    expect(await closed).toMatchObject({ code: CloseCode.Malformed, reason: expect.stringMatching(/binary/) });

    const big = await opened(open(`gameId=t-2&token=${token}`));
    const bigSession = sessions.at(-1) as StreamSession;
    const bigClosed = closeOf(big);
    big.send(new Uint8Array(2048));
    expect((await bigClosed).code).toBe(1009);
    expect((await bigSession.closed).by).toBe("transport");

    const ok = await opened(open(`gameId=t-3&token=${token}`));
    const reply = nextMessage(ok);
    ok.send(new TextEncoder().encode("still here"));
    expect(await reply).toBe("alice:t-3:still here");
    ok.close(1000);
  });

  it("a handler that throws ends its own session with 4500", async () => {
    const ws = await opened(open(`gameId=h-1&token=${token}`, "/throws"));
    expect(await closeOf(ws)).toEqual({ code: CloseCode.Internal, reason: "internal error" });
  });

  it("survives garbage after the upgrade: the bad connection is dropped, others go on", async () => {
    const address = new URL(base);
    const socket = connect(Number(address.port), address.hostname);
    await new Promise((r) => socket.once("connect", r));
    socket.write(
      `GET /echo?gameId=raw&token=${token} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    await new Promise((r) => socket.once("data", r));
    const session = await new Promise<StreamSession>((resolve) => {
      const wait = () => (sessions.at(-1)?.gameId === "raw" ? resolve(sessions.at(-1) as StreamSession) : setTimeout(wait, 5));
      wait();
    });
    // An unmasked client frame with reserved bits set: a protocol error.
    socket.write(Buffer.from([0xff, 0x05, 1, 2, 3, 4, 5]));
    expect((await session.closed).by).toBe("transport");
    await new Promise((r) => socket.once("close", r));

    const ws = await opened(open(`gameId=after&token=${token}`));
    const reply = nextMessage(ws);
    ws.send(new TextEncoder().encode("ok"));
    expect(await reply).toBe("alice:after:ok");
    ws.close(1000);
  });
});
