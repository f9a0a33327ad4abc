// Games played with the client against a real monolith on loopback: to game over on the
// simulator's score over each link, on through a dropped connection, and the clear errors of bad input.
import { Code, ConnectError } from "@connectrpc/connect";
import type { SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import { simulate } from "@flaplab/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Game, GameApi, type GameHooks, nodeConnectTransport, nodeConnector, StreamOpenError, soundName, type StreamLink, wsConnector } from "../src/node.js";
import { cuttableRelay, type Monolith, startMonolith } from "./monolith.js";

/** The published easy seed and the ticks before which its trace flaps. */
const EASY_SEED = 6977347407732442987n;
const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];
const expected = simulate({ seed: EASY_SEED, flapTicks: EASY_FLAP_TICKS });

let m: Monolith;
let api: GameApi;
/** One account per game that plays at the same time as others (each its own login and games). */
const players = new Map<string, GameApi>();

beforeAll(async () => {
  m = await startMonolith();
  const transport = nodeConnectTransport(m.baseUrl);
  api = new GameApi({ auth: transport, initiator: transport });
  await api.register("player", "a long enough password");
  // One at a time: the server hashes at most two passwords of one client address at once.
  for (const name of ["player-ws", "player-wt", "player-facts"]) {
    const own = new GameApi({ auth: transport, initiator: transport });
    await own.register(name, "a long enough password");
    players.set(name, own);
  }
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

/** Hooks that keep what a latency log would: inputs sent, effects, acks and clips, with their times. */
function recorder() {
  const sent = new Map<number, number>();
  const effects = new Map<number, number>();
  const acks: number[] = [];
  const clips: SoundClip[] = [];
  const hooks: GameHooks = {
    inputSent: (seq, time) => sent.set(seq, time),
    effect: (seq, _tick, time) => effects.set(seq, time),
    ack: (ack) => acks.push(ack.seq),
    audio: (clip) => clips.push(clip),
  };
  return { hooks, sent, effects, acks, clips };
}

// The three games play side by side, each on its own account: three players at once.
describe.concurrent("a game played to game over", () => {
  it("the simulator's outcome of the easy trace is the one the server must reach", () => {
    expect(expected).toMatchObject({ score: 7, ticks: 402, died: true });
  });

  const runs: Array<[StreamLink, boolean, string]> = [
    ["websocket", true, "player-ws"],
    ["webtransport", true, "player-wt"],
    ["websocket", false, "player-facts"],
  ];
  for (const [link, views, name] of runs) {
    it(`over ${link}${views ? "" : ", frames read for their facts only"}: starts, flaps on the tick clock, ends at the simulator's score with its summary and sounds`, async () => {
      const api = players.get(name)!;
      const start = await api.startGame({ seed: EASY_SEED });
      const flaps = new Set(EASY_FLAP_TICKS);
      const r = recorder();
      const game = new Game({
        start,
        link,
        connect: nodeConnector(link, m.certSha256),
        resume: (id) => api.resumeGame(id),
        hooks: r.hooks,
        views,
        pressBefore: (tick) => flaps.has(tick),
      });
      const result = await game.play();
      expect(result).toMatchObject({ completed: true, error: undefined, score: expected.score, ticks: expected.ticks, reconnections: 0 });
      expect(result.summary).toMatchObject({ score: 7, ticks: 402, recorded: true });
      // The start input and one input per flap, every flap acked once and its effect seen after it was sent.
      expect(game.stream.inputsSent).toBe(1 + EASY_FLAP_TICKS.length);
      expect(r.acks).toEqual(EASY_FLAP_TICKS.map((_, i) => i + 2));
      for (let seq = 2; seq <= 1 + EASY_FLAP_TICKS.length; seq++) expect(r.effects.get(seq)).toBeGreaterThanOrEqual(r.sent.get(seq)!);
      // A flap clip per flap, a point clip per point, and the die clip.
      const names = r.clips.map((c) => soundName(c.sound));
      expect(names.filter((n) => n === "flap")).toHaveLength(EASY_FLAP_TICKS.length);
      expect(names.filter((n) => n === "point")).toHaveLength(7);
      expect(names.at(-1)).toBe("die");
      expect(result.clips).toBe(r.clips.length);
    }, 60_000);
  }
});

describe("a game that survives its connection", () => {
  it("after a dropped connection asks ResumeGame, answers the continued game's full frame, and ends at the simulator's score", async () => {
    const start = await api.startGame({ seed: EASY_SEED });
    const engine = new URL(start.engineWsUrl);
    const relay = await cuttableRelay({ host: engine.hostname, port: Number(engine.port) });
    try {
      const viaRelay = { ...start, engineWsUrl: start.engineWsUrl.replace(`:${engine.port}/`, `:${relay.port}/`) };
      const flaps = new Set(EASY_FLAP_TICKS);
      const interrupted: Array<[string, number]> = [];
      let cutAt = 0;
      const game = new Game({
        start: viaRelay,
        link: "websocket",
        connect: wsConnector(),
        resume: (id) => api.resumeGame(id),
        hooks: {
          interrupted: (kind, tick) => interrupted.push([kind, tick]),
          frame: (frame) => {
            // Cut the link once, between two flaps.
            if (frame.tick === 150 && cutAt === 0) {
              cutAt = frame.tick;
              relay.cut();
            }
          },
        },
        pressBefore: (tick) => flaps.has(tick),
      });
      const result = await game.play();
      expect(cutAt).toBe(150);
      expect(interrupted).toEqual([["resumed", 150]]);
      expect(result).toMatchObject({ completed: true, error: undefined, score: expected.score, ticks: expected.ticks, reconnections: 1 });
      expect(result.summary).toMatchObject({ recorded: true });
    } finally {
      await relay.close();
    }
  }, 60_000);
});

describe("bad input gets a clear error", () => {
  it("ResumeGame of an unknown game id", async () => {
    const err = await api.resumeGame("no-such-game").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).rawMessage).toMatch(/no-such-game|no game|unknown/i);
  });

  it("a game stream for an unknown game id is refused with its reason, and the game ends with that error", async () => {
    const start = await api.startGame({ seed: EASY_SEED });
    const game = new Game({ start: { ...start, gameId: "no-such-game" }, link: "websocket", connect: wsConnector(), music: false });
    const outcome = await game.play().then(
      (result) => `ended: ${result.error}`,
      (err: unknown) => `refused: ${(err as Error).message}`,
    );
    expect(outcome).toBe("ended: game stream closed: 4403 the stream ticket is not for game no-such-game");
  });

  it("a bad token: StartGame answers unauthenticated; a bad stream ticket: the stream is refused with HTTP 401", async () => {
    const transport = nodeConnectTransport(m.baseUrl);
    const stranger = new GameApi({ auth: transport, initiator: transport, token: () => "not-a-token" });
    const err = await stranger.startGame({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    const nobody = new GameApi({ auth: transport, initiator: transport });
    await expect(nobody.startGame({})).rejects.toThrow("not logged in: register or log in first");

    const start = await api.startGame({});
    const game = new Game({ start: { ...start, streamTicket: "forged" }, link: "websocket", connect: wsConnector(), music: false });
    const refused = await game.open().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StreamOpenError);
    expect(refused).toMatchObject({ stream: "game", status: 401, message: expect.stringMatching(/^game stream refused: HTTP 401/) });
  });

  it("a wrong password: Login answers unauthenticated", async () => {
    await expect(api.login("player", "not the password at all")).rejects.toMatchObject({ code: Code.Unauthenticated });
  });
});
