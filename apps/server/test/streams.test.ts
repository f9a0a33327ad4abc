import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { Sound, type SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { Game, nodeWebTransportConnector } from "@flaplab/game-client/node";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.js";
import { startMonolith } from "./helpers.js";
import { attempt, EASY_FLAP_TICKS, EASY_SEED, input, type Link, openLink, openStream, playOver, refusal } from "./play.js";

// The real stream server of a monolith, played with @flaplab/game-client over the WebTransport
// library's Node client (HTTP/2 capsules) and over the plain WebSocket link; the tests that send
// their own bytes open single sessions. Flaps are sent when the frame before their tick arrives,
// so the game is deterministic over the real network stack.
const FLAP_TICKS = EASY_FLAP_TICKS;

let server: RunningServer;
let baseUrl: string;
let token: string;
let otherToken: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  const monolith = await startMonolith(["streamer", "intruder"]);
  ({ server, baseUrl, stop } = monolith);
  [token, otherToken] = monolith.tokens as [string, string];
}, 60_000);

afterAll(async () => {
  await stop?.();
});

async function startGame(seed?: bigint, as = token) {
  const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  return initiator.startGame({ seed }, { headers: { authorization: `Bearer ${as}` } });
}

/** The query a game's streams are opened with: its id and its stream ticket. */
const ticketOf = (game: { gameId: string; streamTicket: string }) => ({ gameId: game.gameId, ticket: game.streamTicket });

const open = (url: string, query: Record<string, string>, onMessage?: (bytes: Uint8Array) => void) =>
  openStream(url, query, server.streams!.certificate.sha256, onMessage);

/** How a session ended, or code -1 when it did not within 5 s. */
async function closeOf(o: Link): Promise<{ code: number; reason: string }> {
  return Promise.race([o.closed, new Promise<{ code: number; reason: string }>((r) => setTimeout(() => r({ code: -1, reason: "no close within 5 s" }), 5000))]);
}

describe("game and music streams", () => {
  it("plays the easy seed to score 7 at tick 402, with sounds tagged by input, and records the run", async () => {
    const game = await startGame(EASY_SEED);
    expect(game.engineUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/engine\/v1\/game$/);
    const clips: SoundClip[] = [];
    let frameBytes = 0;
    let frames = 0;
    let ackBytes = 0;
    /** [tick, reflected seq] of each input ack, and the seq last sent when it arrived. */
    const acks: [number, number, number][] = [];
    let engineEnd: { code: number; reason: string } | undefined;
    const flaps = new Set(FLAP_TICKS);
    const played = new Game({
      start: game,
      link: "webtransport",
      connect: nodeWebTransportConnector(server.streams!.certificate.sha256),
      pressBefore: (tick) => flaps.has(tick),
      hooks: {
        audio: (clip) => clips.push(clip),
        frame: (_frame, _view, _time, bytes) => {
          frames++;
          frameBytes += bytes;
        },
        // The engine applied a flap between ticks: same tick, no movement yet.
        ack: (_ack, view, _time, bytes) => {
          acks.push([view!.tick, view!.reflectedSeq, played.stream.inputsSent]);
          ackBytes += bytes;
        },
        ended: (kind, end) => {
          if (kind === "game") engineEnd ??= end;
        },
      },
    });
    const { score, ticks: lastTick, summary } = await played.play();
    expect({ score, lastTick }).toEqual({ score: 7, lastTick: 402 });
    expect(summary).toMatchObject({ score: 7, ticks: 402, recorded: true, framesSent: 402, acksSent: 14 });
    // The engine's byte counts are what arrived, and frames stay tiny (FlappyGo's were ~190 B).
    expect(Number(summary!.frameBytes)).toBe(frameBytes);
    expect(summary!.framesUnder1kb).toBe(402);
    expect(frameBytes / frames).toBeLessThan(19);
    expect(Number(summary!.ackBytes)).toBe(ackBytes);
    // One ack per flap, for the tick before the one it moves, each after its own input was sent.
    expect(acks).toEqual(FLAP_TICKS.map((t, i) => [t - 1, i + 2, i + 2]));
    expect(engineEnd).toMatchObject({ code: CloseCode.Normal, reason: "game over" });

    const flapClips = clips.filter((c) => c.sound === Sound.FLAP).map((c) => c.inputSeq);
    expect(flapClips).toEqual(Array.from({ length: 14 }, (_, i) => i + 2));
    expect(clips.filter((c) => c.sound === Sound.POINT)).toHaveLength(7);
    expect(clips.at(-1)?.sound).toBe(Sound.DIE);
    expect(new TextDecoder().decode(clips[0]!.audio.subarray(0, 4))).toBe("RIFF");

    const scores = createClient(ScoreService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const { ownRuns } = await scores.getScores({}, { headers: { authorization: `Bearer ${token}` } });
    expect(ownRuns.find((r) => r.gameId === game.gameId)).toMatchObject({ score: 7, ticks: 402, seed: EASY_SEED });
  }, 60_000);

  it("refuses a bad ticket, and a player token instead of a ticket, before accepting the session", async () => {
    const game = await startGame();
    const queries: Record<string, string>[] = [{ gameId: game.gameId, ticket: "nope" }, { gameId: game.gameId, token }, { gameId: game.gameId, ticket: token }];
    for (const query of queries) {
      expect(await attempt(game.engineUrl, query, server.streams!.certificate.sha256)).toMatchObject({ refused: true });
    }
    expect(server.streams!.openSessions).toBe(0);
  });

  it("closes with 4403 for another player's game (their ticket for their own game), on the engine and on music", async () => {
    const game = await startGame();
    const theirs = await startGame(undefined, otherToken);
    const engine = await open(game.engineUrl, { gameId: game.gameId, ticket: theirs.streamTicket });
    expect(await closeOf(engine)).toMatchObject({ code: CloseCode.PermissionDenied, reason: `the stream ticket is not for game ${game.gameId}` });
    const music = await open(game.musicUrl, { gameId: game.gameId, ticket: theirs.streamTicket });
    expect(await closeOf(music)).toMatchObject({ code: CloseCode.PermissionDenied });
  });

  it("closes a second connection to the same game with 4409 and keeps the first", async () => {
    const game = await startGame();
    let received = 0;
    const first = await open(game.engineUrl, ticketOf(game), (bytes) => (received += bytes.byteLength));
    first.send(input(1));
    const second = await open(game.engineUrl, ticketOf(game));
    expect(await closeOf(second)).toMatchObject({ code: CloseCode.AlreadyConnected });
    const before = received;
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toBeGreaterThan(before); // frames still flow on the first
    first.close();
  });

  it("closes with 4400 on garbage bytes and does not disturb the server", async () => {
    const game = await startGame();
    const o = await open(game.engineUrl, ticketOf(game));
    o.send(new Uint8Array([0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect(await closeOf(o)).toMatchObject({ code: CloseCode.Malformed });
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
  });

  it("ends a finished game normally, and refuses to go on with it: 4410", async () => {
    const game = await startGame(EASY_SEED);
    // No flaps: the bird falls into pipe 0 at tick 52.
    const played = await playOver(game, [], { link: "webtransport", certSha256: server.streams!.certificate.sha256 });
    expect(played.lastTick).toBe(52);
    expect(played.close).toMatchObject({ code: CloseCode.Normal, reason: "game over" });
    const again = await open(game.engineUrl, ticketOf(game));
    again.send(input(2));
    expect(await closeOf(again)).toMatchObject({ code: CloseCode.GameOver, reason: expect.stringMatching(/is over/) });
  });
});

describe("the plain WebSocket link of the same streams, at the RPC port (ws client)", () => {
  it("is handed out by StartGame at the RPC port, and plays the easy seed to 7 at tick 402 with its sounds, recorded", async () => {
    const game = await startGame(EASY_SEED);
    expect(game.engineWsUrl).toBe(`ws://127.0.0.1:${server.port}/engine/v1/game`);
    expect(game.musicWsUrl).toBe(`ws://127.0.0.1:${server.port}/music/v1/music`);
    const { score, lastTick, acks, summary, close, clips } = await playOver(game, EASY_FLAP_TICKS, { music: true });
    expect(close).toEqual({ code: CloseCode.Normal, reason: "game over", failed: false });
    expect({ score, lastTick, acks }).toEqual({ score: 7, lastTick: 402, acks: 14 });
    expect(summary).toMatchObject({ score: 7, ticks: 402, recorded: true, framesSent: 402, acksSent: 14 });
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
    expect(await (await openLink(game.engineWsUrl, stolen)).closed).toMatchObject({ code: CloseCode.PermissionDenied });
    expect(await (await openLink(game.musicWsUrl, stolen)).closed).toMatchObject({ code: CloseCode.PermissionDenied });

    const o = await openLink(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket });
    o.send(new Uint8Array([0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect(await o.closed).toMatchObject({ code: CloseCode.Malformed });
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });
});
