import { rm } from "node:fs/promises";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { Sound, SoundClipSchema, type SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import { CloseCode, DelimitedDecoder } from "@flaplab/game-stream";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../src/server.js";
import { topologyOnFreePorts } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, openLink, playOver, refusal, startGame as startGameAs } from "./ws-client.js";

// The plain WebSocket link of a monolith's streams, at its RPC port, driven by the ws client.

let server: RunningServer;
let dir: string;
let baseUrl: string;
let token: string;
let otherToken: string;

beforeAll(async () => {
  const topo = await topologyOnFreePorts("monolith");
  dir = topo.dir;
  server = await startServer({ topology: await loadTopology(topo.file), group: "monolith", dataDir: dir, logger: pino({ level: "silent" }) });
  baseUrl = `http://127.0.0.1:${server.port}`;
  const auth = createClient(AuthService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  token = (await auth.register({ username: "wsplayer", password: "a long enough password" })).session!.token;
  otherToken = (await auth.register({ username: "wsintruder", password: "a long enough password" })).session!.token;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const startGame = (seed?: bigint, as = token) => startGameAs(baseUrl, as, seed);
const open = openLink;

describe("the WebSocket link of the streams", () => {
  it("is handed out by StartGame at the RPC port, and plays the easy seed to 7 at tick 402 with its sounds, recorded", async () => {
    const game = await startGame(EASY_SEED);
    expect(game.engineWsUrl).toBe(`ws://127.0.0.1:${server.port}/engine/v1/game`);
    expect(game.musicWsUrl).toBe(`ws://127.0.0.1:${server.port}/music/v1/music`);
    const q = { gameId: game.gameId, ticket: game.streamTicket };
    const clips: SoundClip[] = [];
    const clipDecoder = new DelimitedDecoder(SoundClipSchema, 1 << 20);
    const music = await open(game.musicWsUrl, q, (bytes) => clips.push(...clipDecoder.push(bytes)));

    const { score, lastTick, acks, summary, close } = await playOver(game.engineWsUrl, q, EASY_FLAP_TICKS);
    expect(close).toEqual({ code: 1000, reason: "game over" });
    expect({ score, lastTick, acks }).toEqual({ score: 7, lastTick: 402, acks: 14 });
    expect(summary).toMatchObject({ score: 7, ticks: 402, recorded: true, framesSent: 402, acksSent: 14 });
    await music.closed;
    expect(clips.filter((c) => c.sound === Sound.FLAP).map((c) => c.inputSeq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 2));
    expect(clips.at(-1)?.sound).toBe(Sound.DIE);
  }, 60_000);

  it("refuses before the upgrade: a bad ticket or a player token 401, no game id 400, an unknown path 404", async () => {
    const game = await startGame();
    expect(await refusal(game.engineWsUrl, { gameId: game.gameId, ticket: "nope" })).toBe(401);
    expect(await refusal(game.engineWsUrl, { gameId: game.gameId, token })).toBe(401);
    expect(await refusal(game.engineWsUrl, { ticket: game.streamTicket })).toBe(400);
    expect(await refusal(`ws://127.0.0.1:${server.port}/nowhere`, { gameId: game.gameId, ticket: game.streamTicket })).toBe(404);
  });

  it("closes with 4403 for another player's game on the engine and on music, and 4400 on garbage, and the server serves on", async () => {
    const game = await startGame();
    const theirs = await startGame(undefined, otherToken);
    const stolen = { gameId: game.gameId, ticket: theirs.streamTicket };
    expect(await (await open(game.engineWsUrl, stolen)).closed).toMatchObject({ code: CloseCode.PermissionDenied });
    expect(await (await open(game.musicWsUrl, stolen)).closed).toMatchObject({ code: CloseCode.PermissionDenied });

    const o = await open(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket });
    o.ws.send(new Uint8Array([0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect(await o.closed).toMatchObject({ code: CloseCode.Malformed });
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });
});
