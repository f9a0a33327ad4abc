import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ClientInputSchema, GameStreamMessageSchema, type GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { SoundClipSchema, Sound, type SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { CloseCode, DelimitedDecoder, encodeDelimited, FrameDecoder } from "@flaplab/game-protocol";
import { loadWebTransport } from "@flaplab/stream-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.js";
import { startMonolith } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, openLink, playOver, refusal } from "./ws-client.js";

// The real stream server of a monolith, driven by the WebTransport library's Node client
// (HTTP/2 capsules). Flaps are sent when the frame before their tick arrives, so the game is
// deterministic over the real network stack.
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

interface Opened {
  wt: { ready: Promise<unknown>; closed: Promise<{ closeCode?: number; reason?: string }>; close(): void };
  writer: WritableStreamDefaultWriter<Uint8Array>;
  reader: ReadableStreamDefaultReader<Uint8Array>;
}

async function open(url: string, query: Record<string, string>): Promise<Opened> {
  const { lib } = await loadWebTransport();
  const wt = new lib.WebTransport(`${url}?${new URLSearchParams(query)}`, {
    forceReliable: true,
    serverCertificateHashes: [{ algorithm: "sha-256", value: server.streams!.certificate.sha256 }],
  } as never) as unknown as Opened["wt"] & { createBidirectionalStream(): Promise<{ readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> }> };
  await wt.ready;
  const bidi = await wt.createBidirectionalStream();
  return { wt, writer: bidi.writable.getWriter(), reader: bidi.readable.getReader() };
}

const input = (seq: number) => encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: performance.timeOrigin + performance.now() }));

async function closeOf(o: Opened): Promise<{ closeCode?: number; reason?: string }> {
  return Promise.race([
    o.wt.closed.catch((e: unknown) => e as { closeCode?: number; reason?: string }),
    new Promise<{ closeCode: number; reason: string }>((r) => setTimeout(() => r({ closeCode: -1, reason: "no close within 5 s" }), 5000)),
  ]);
}

describe("game and music streams", () => {
  it("plays the easy seed to score 7 at tick 402, with sounds tagged by input, and records the run", async () => {
    const game = await startGame(EASY_SEED);
    expect(game.engineUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/engine\/v1\/game$/);
    const q = ticketOf(game);
    const music = await open(game.musicUrl, q);
    const clips: SoundClip[] = [];
    const musicDone = (async () => {
      const dec = new DelimitedDecoder(SoundClipSchema, 1 << 20);
      for (;;) {
        const { value, done } = await music.reader.read();
        if (done) return;
        clips.push(...dec.push(value));
      }
    })();
    const engine = await open(game.engineUrl, q);
    await engine.writer.write(input(1));
    const dec = new DelimitedDecoder(GameStreamMessageSchema);
    const view = new FrameDecoder();
    let seq = 1;
    let summary: GameSummary | undefined;
    const last = view;
    let lastTick = 0;
    let score = 0;
    let frameBytes = 0;
    let frames = 0;
    let ackBytes = 0;
    /** [tick, reflected seq] of each input ack, and the seq last sent when it arrived. */
    const acks: [number, number, number][] = [];
    while (!summary) {
      const { value, done } = await engine.reader.read();
      if (done) break;
      for (const msg of dec.push(value)) {
        if (msg.kind.case === "summary") summary = msg.kind.value;
        const bytes = encodeDelimited(GameStreamMessageSchema, msg).byteLength;
        if (msg.kind.case === "ack") {
          // The engine applied a flap between ticks: same tick, no movement yet.
          const v = last.applyAck(msg.kind.value);
          acks.push([v.tick, v.reflectedSeq, seq]);
          ackBytes += bytes;
          continue;
        }
        if (msg.kind.case !== "frame") continue;
        const v = last.apply(msg.kind.value);
        frames++;
        frameBytes += bytes;
        lastTick = v.tick;
        score = v.score;
        if (FLAP_TICKS.includes(v.tick + 1)) await engine.writer.write(input(++seq));
      }
    }
    expect({ score, lastTick }).toEqual({ score: 7, lastTick: 402 });
    expect(summary).toMatchObject({ score: 7, ticks: 402, recorded: true, framesSent: 402, acksSent: 14 });
    // The engine's byte counts are what arrived, and frames stay tiny (FlappyGo's were ~190 B).
    expect(Number(summary!.frameBytes)).toBe(frameBytes);
    expect(summary!.framesUnder1kb).toBe(402);
    expect(frameBytes / frames).toBeLessThan(19);
    expect(Number(summary!.ackBytes)).toBe(ackBytes);
    // One ack per flap, for the tick before the one it moves, each after its own input was sent.
    expect(acks).toEqual(FLAP_TICKS.map((t, i) => [t - 1, i + 2, i + 2]));
    expect(await closeOf(engine)).toMatchObject({ closeCode: CloseCode.Normal, reason: "game over" });

    await musicDone;
    const flaps = clips.filter((c) => c.sound === Sound.FLAP).map((c) => c.inputSeq);
    expect(flaps).toEqual(Array.from({ length: 14 }, (_, i) => i + 2));
    expect(clips.filter((c) => c.sound === Sound.POINT)).toHaveLength(7);
    expect(clips.at(-1)?.sound).toBe(Sound.DIE);
    expect(new TextDecoder().decode(clips[0]!.audio.subarray(0, 4))).toBe("RIFF");

    const scores = createClient(ScoreService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const { ownRuns } = await scores.getScores({}, { headers: { authorization: `Bearer ${token}` } });
    expect(ownRuns.find((r) => r.gameId === game.gameId)).toMatchObject({ score: 7, ticks: 402, seed: EASY_SEED });
  }, 60_000);

  it("refuses a bad ticket, and a player token instead of a ticket, before accepting the session", async () => {
    const game = await startGame();
    const { lib } = await loadWebTransport();
    const queries: Record<string, string>[] = [{ gameId: game.gameId, ticket: "nope" }, { gameId: game.gameId, token }, { gameId: game.gameId, ticket: token }];
    for (const query of queries) {
      const wt = new lib.WebTransport(`${game.engineUrl}?${new URLSearchParams(query)}`, {
        forceReliable: true,
        serverCertificateHashes: [{ algorithm: "sha-256", value: server.streams!.certificate.sha256 }],
      } as never);
      const closed = wt.closed.catch((e: unknown) => e);
      await expect(wt.ready).rejects.toBeDefined();
      expect(await closed).toBeInstanceOf(Error);
    }
    expect(server.streams!.openSessions).toBe(0);
  });

  it("closes with 4403 for another player's game (their ticket for their own game), on the engine and on music", async () => {
    const game = await startGame();
    const theirs = await startGame(undefined, otherToken);
    const engine = await open(game.engineUrl, { gameId: game.gameId, ticket: theirs.streamTicket });
    expect(await closeOf(engine)).toMatchObject({ closeCode: CloseCode.PermissionDenied, reason: `the stream ticket is not for game ${game.gameId}` });
    const music = await open(game.musicUrl, { gameId: game.gameId, ticket: theirs.streamTicket });
    expect(await closeOf(music)).toMatchObject({ closeCode: CloseCode.PermissionDenied });
  });

  it("closes a second connection to the same game with 4409 and keeps the first", async () => {
    const game = await startGame();
    const first = await open(game.engineUrl, ticketOf(game));
    await first.writer.write(input(1));
    const second = await open(game.engineUrl, ticketOf(game));
    expect(await closeOf(second)).toMatchObject({ closeCode: CloseCode.AlreadyConnected });
    const { value } = await first.reader.read();
    expect(value!.byteLength).toBeGreaterThan(0); // frames still flow on the first
    first.wt.close();
  });

  it("closes with 4400 on garbage bytes and does not disturb the server", async () => {
    const game = await startGame();
    const o = await open(game.engineUrl, ticketOf(game));
    await o.writer.write(new Uint8Array([0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect(await closeOf(o)).toMatchObject({ closeCode: CloseCode.Malformed });
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
  });

  it("ends a finished game normally, and refuses to go on with it: 4410", async () => {
    const game = await startGame(EASY_SEED);
    const o = await open(game.engineUrl, ticketOf(game));
    await o.writer.write(input(1));
    const dec = new DelimitedDecoder(GameStreamMessageSchema);
    // No flaps: the bird falls into pipe 0 at tick 52.
    let overAt = 0;
    while (overAt === 0) {
      const { value, done } = await o.reader.read();
      if (done) break;
      for (const m of dec.push(value)) if (m.kind.case === "frame" && m.kind.value.gameOver) overAt = m.kind.value.tick;
    }
    expect(overAt).toBe(52);
    expect(await closeOf(o)).toMatchObject({ closeCode: CloseCode.Normal, reason: "game over" });
    const again = await open(game.engineUrl, ticketOf(game));
    await again.writer.write(input(2)).catch(() => undefined);
    expect(await closeOf(again)).toMatchObject({ closeCode: CloseCode.GameOver, reason: expect.stringMatching(/is over/) });
  });
});

describe("the plain WebSocket link of the same streams, at the RPC port (ws client)", () => {
  it("is handed out by StartGame at the RPC port, and plays the easy seed to 7 at tick 402 with its sounds, recorded", async () => {
    const game = await startGame(EASY_SEED);
    expect(game.engineWsUrl).toBe(`ws://127.0.0.1:${server.port}/engine/v1/game`);
    expect(game.musicWsUrl).toBe(`ws://127.0.0.1:${server.port}/music/v1/music`);
    const q = { gameId: game.gameId, ticket: game.streamTicket };
    const clips: SoundClip[] = [];
    const clipDecoder = new DelimitedDecoder(SoundClipSchema, 1 << 20);
    const music = await openLink(game.musicWsUrl, q, (bytes) => clips.push(...clipDecoder.push(bytes)));

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
    expect(await (await openLink(game.engineWsUrl, stolen)).closed).toMatchObject({ code: CloseCode.PermissionDenied });
    expect(await (await openLink(game.musicWsUrl, stolen)).closed).toMatchObject({ code: CloseCode.PermissionDenied });

    const o = await openLink(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket });
    o.ws.send(new Uint8Array([0x05, 0xff, 0xff, 0xff, 0xff, 0xff]));
    expect(await o.closed).toMatchObject({ code: CloseCode.Malformed });
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });
});
