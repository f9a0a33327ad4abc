// Attack 1: one malformed frame on the stream port. A WebSocket to the engine's stream path with a
// garbage credential, then one masked binary frame whose stated length (1) is shorter than the
// capsule type it starts (2 bytes): `82 81 00 00 00 00 40 00 00`. The WebSocket parser of the
// stream library once built a typed array of length -1 from it and threw out of its socket
// handler, which ended the whole process. Now the credential is checked before the upgrade (401),
// and with a good credential the same frame, and its variants, close only their own connection.
// Afterwards the server answers /healthz and a player plays a whole game over the streams.
import { connect as h2connect } from "node:http2";
import { openRawTls, type RawTlsConnection } from "@flaplab/testkit";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EASY_FLAP_TICKS, EASY_SEED, playOver } from "../play.js";
import { startMonolith, type Monolith } from "./credentials-harness.js";

let mono: Monolith;
let token: string;

beforeAll(async () => {
  mono = await startMonolith();
  token = await mono.register("frame-attacker");
}, 60_000);

afterAll(async () => {
  await mono?.stop();
});

const THE_FRAME = "82 81 00 00 00 00 40 00 00";
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");

async function startGame(seed?: bigint) {
  const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: mono.baseUrl, httpVersion: "1.1" }));
  return initiator.startGame(seed === undefined ? {} : { seed }, { headers: { authorization: `Bearer ${token}` } });
}

async function healthy(): Promise<boolean> {
  try {
    return (await fetch(`${mono.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

const streamPort = () => mono.server.streams!.port;

const tls = (): Promise<RawTlsConnection> => openRawTls(streamPort());

const upgradeRequest = (pathAndQuery: string): string =>
  `GET ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1:${streamPort()}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
  `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: webtransport_kDraft2\r\n\r\n`;

/** The status of the answer to the upgrade, once its head is in (0: closed without one). */
async function statusOf(conn: RawTlsConnection): Promise<number> {
  const deadline = Date.now() + 5000;
  while (!conn.received().includes("\r\n\r\n") && Date.now() < deadline) {
    if (await conn.closedWithin(20)) break;
  }
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(conn.received().toString("latin1"))?.[1] ?? 0);
}

describe("attack 1: a malformed frame on the stream port", () => {
  it("the exact attack: garbage token, then the frame, is refused with 401 and the server keeps serving", async () => {
    const game = await startGame();
    const path = new URL(game.engineUrl).pathname;
    const conn = await tls();
    // As the attacker sends it: the frame right behind the upgrade request, without waiting.
    conn.socket.write(upgradeRequest(`${path}?gameId=${game.gameId}&token=garbage`));
    conn.socket.write(hex(THE_FRAME));
    expect(await statusOf(conn)).toBe(401);
    expect(await conn.closedWithin(3000)).toBe(true);
    expect(await healthy()).toBe(true);
  });

  // Each after an accepted upgrade, with the game's own stream ticket (the credential is good).
  const variants: [string, string][] = [
    ["the attack frame", THE_FRAME],
    ["the attack frame with a real mask", "82 81 5a 17 c3 08 1a 17 c3"],
    ["the same byte unmasked in a non-final frame", "02 01 40 00 00"],
    ["a 4-byte capsule type in a 1-byte frame", "82 81 00 00 00 00 99 0b 4d 3b"],
    ["a stream capsule for the even stream id 0 (the server's own)", "82 85 00 00 00 00 99 0b 4d 3b 00"],
    ["a stream capsule for the even stream id 745491888 with an input", "82 94 00 00 00 00 99 0b 4d 3b ac 6f 4d b0 0b 08 01 11 00 00 00 00 00 40 8f 40"],
    ["a close-session capsule without its code", "82 82 00 00 00 00 68 43"],
    ["a ping of 200 bytes", `89 fe 00 c8 00 00 00 00 ${"00 ".repeat(200)}`],
    ["a 64-bit frame length with the top bit set", `82 ff 80 00 00 00 00 00 00 01 00 00 00 00 ${"00 ".repeat(16)}`],
  ];
  it.each(variants)("%s with a good ticket: closes that connection only", async (_name, bytes) => {
    const game = await startGame();
    const path = new URL(game.engineUrl).pathname;
    const conn = await tls();
    conn.socket.write(upgradeRequest(`${path}?${new URLSearchParams({ gameId: game.gameId, ticket: game.streamTicket })}`));
    expect(await statusOf(conn)).toBe(101);
    conn.socket.write(hex(bytes));
    expect(await conn.closedWithin(4000)).toBe(true);
    expect(await healthy()).toBe(true);
  });

  it("the frame in the same packet as an accepted upgrade request closes that connection only", async () => {
    const game = await startGame();
    const path = new URL(game.engineUrl).pathname;
    const conn = await tls();
    conn.socket.write(Buffer.concat([Buffer.from(upgradeRequest(`${path}?${new URLSearchParams({ gameId: game.gameId, ticket: game.streamTicket })}`)), hex(THE_FRAME)]));
    expect(await conn.closedWithin(4000)).toBe(true);
    expect(await healthy()).toBe(true);
  });

  it("a capsule for the server's own stream id 0 over HTTP/2 closes that session only", async () => {
    const game = await startGame();
    const client = h2connect(`https://127.0.0.1:${streamPort()}`, { rejectUnauthorized: false });
    client.on("error", () => undefined);
    try {
      await new Promise<void>((r) => client.once("remoteSettings", () => r()));
      const stream = client.request(
        {
          ":method": "CONNECT",
          ":protocol": "webtransport",
          ":scheme": "https",
          ":authority": `127.0.0.1:${streamPort()}`,
          ":path": `${new URL(game.engineUrl).pathname}?${new URLSearchParams({ gameId: game.gameId, ticket: game.streamTicket })}`,
        },
        { endStream: false },
      );
      stream.on("error", () => undefined);
      expect(await new Promise<number>((r) => stream.once("response", (h) => r(Number(h[":status"]))))).toBe(200);
      const closed = new Promise<boolean>((r) => {
        const t = setTimeout(() => r(false), 4000);
        stream.once("close", () => {
          clearTimeout(t);
          r(true);
        });
      });
      stream.write(hex("99 0b 4d 3b 01 00"));
      expect(await closed).toBe(true);
    } finally {
      client.destroy();
    }
    expect(await healthy()).toBe(true);
  });

  it("afterwards a player still plays a whole game over the streams: score 7 at tick 402", async () => {
    expect(await healthy()).toBe(true);
    const game = await startGame(EASY_SEED);
    const played = await playOver(game, EASY_FLAP_TICKS, { link: "webtransport", certSha256: mono.server.streams!.certificate.sha256, music: true });
    expect({ score: played.score, lastTick: played.lastTick }).toEqual({ score: 7, lastTick: 402 });
    expect(played.summary).toMatchObject({ score: 7, ticks: 402, recorded: true });
    expect(played.close).toMatchObject({ code: CloseCode.Normal });
  }, 60_000);
});
