import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { Sound } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.js";
import { startMonolith } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, input, type Link, openLink, openStream, playOver, refusal, startGame as startGameAs } from "./play.js";

// A monolith whose engine plays its WebSocket games on two shard processes (FLAPLAB_ENGINE_SHARDS).
let server: RunningServer;
let baseUrl: string;
let token: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  const monolith = await startMonolith(["sharded"], { FLAPLAB_ENGINE_SHARDS: "2" });
  ({ server, baseUrl, stop } = monolith);
  token = monolith.tokens[0]!;
}, 60_000);

afterAll(async () => {
  await stop?.();
});

const startGame = (seed?: bigint) => startGameAs(baseUrl, token, seed);
const ticket = (game: { gameId: string; streamTicket: string }) => ({ gameId: game.gameId, ticket: game.streamTicket });
const waitFor = async (what: string, ok: () => boolean, ms = 5000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("engine shards", () => {
  it("start two shard processes beside the group's", () => {
    const stats = server.shards!.stats();
    expect(stats).toHaveLength(2);
    const pids = stats.map((s) => s.pid);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(process.pid);
  });

  it("play the easy seed on a shard to 7 at tick 402: sounds through the group's music, the run recorded by its score", async () => {
    const game = await startGame(EASY_SEED);
    const before = server.shards!.stats().reduce((a, s) => a + s.handed, 0);
    const played = await playOver(game, EASY_FLAP_TICKS, { music: true });
    const { clips } = played;
    expect(server.shards!.stats().reduce((a, s) => a + s.handed, 0)).toBe(before + 1);
    expect(played).toMatchObject({ score: 7, lastTick: 402, acks: 14, close: { code: CloseCode.Normal, reason: "game over" } });
    expect(played.summary).toMatchObject({ score: 7, ticks: 402, recorded: true, framesSent: 402, acksSent: 14 });
    expect(clips.filter((c) => c.sound === Sound.FLAP).map((c) => c.inputSeq)).toEqual(Array.from({ length: 14 }, (_, i) => i + 2));
    expect(clips.at(-1)?.sound).toBe(Sound.DIE);
    const scores = createClient(ScoreService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const { ownRuns } = await scores.getScores({}, { headers: { authorization: `Bearer ${token}` } });
    expect(ownRuns.find((r) => r.gameId === game.gameId)).toMatchObject({ score: 7, ticks: 402, seed: EASY_SEED });
    await waitFor("the game's end to come back", () => server.shards!.stats().every((s) => s.games === 0));
    // The finished game left the shard's own table too (not kept for the finished-game time).
    expect((await server.shards!.sample()).map((x) => x.games)).toEqual([0, 0]);
  }, 60_000);

  it("spread games over the shards, refuse a second stream of a handed game with 409, and free the player's slots when the games end", async () => {
    const links: Link[] = [];
    const games = [];
    for (let i = 0; i < 3; i++) {
      const game = await startGame();
      games.push(game);
      const link = await openLink(game.engineWsUrl, ticket(game));
      link.send(input(1));
      links.push(link);
    }
    await waitFor("three games on the shards", () => server.shards!.stats().reduce((a, s) => a + s.games, 0) === 3);
    expect(server.shards!.stats().map((s) => s.games).sort()).toEqual([1, 2]);
    // Each shard measures its own ticks.
    await server.shards!.sample();
    await new Promise((r) => setTimeout(r, 300));
    const samples = await server.shards!.sample();
    expect(samples.map((x) => x.sessions).sort()).toEqual([1, 2]);
    expect(samples.map((x) => x.pid).sort()).toEqual(server.shards!.stats().map((x) => x.pid).sort());
    for (const x of samples) {
      // About 9 ticks a game in 300 ms.
      expect(x.ticks).toBeGreaterThanOrEqual(5 * x.sessions);
      expect(x.latenessUs.p50).not.toBeNull();
      expect(x.lateTicks).toBeLessThanOrEqual(x.ticks);
      expect(x.cpuUs).toBeGreaterThan(0);
      expect(x.heapUsedBytes).toBeGreaterThan(0);
      // Its sockets at least: a game's WebSocket each, and the IPC channel.
      expect(x.fds).toBeGreaterThan(x.sessions);
    }
    // The group's WebSocket link counts the game's session in the shard: a second is refused before the upgrade.
    expect(await refusal(games[0]!.engineWsUrl, ticket(games[0]!))).toBe(409);
    expect(server.shards!.stats().reduce((a, s) => a + s.sessions, 0)).toBe(3);
    // The player holds 3 unfinished games (the limit): a fourth is refused while they play.
    await expect(startGame()).rejects.toThrow(/already has 3 games in progress/);
    for (const link of links) link.close(1000, "leaving");
    await waitFor("the games' ends and sessions to come back", () => server.shards!.stats().every((s) => s.games === 0 && s.sessions === 0));
    await startGame();
  }, 30_000);

  it("leave a game that already has a WebTransport stream in the group's process: its WebSocket gets 4409, it plays on", async () => {
    const game = await startGame();
    let received = 0;
    const wt = await openStream(game.engineUrl, ticket(game), server.streams!.certificate.sha256, (bytes) => (received += bytes.byteLength));
    wt.send(input(1));
    await waitFor("the first frame: it plays here", () => received > 0);
    const handed = server.shards!.stats().reduce((a, s) => a + s.handed, 0);
    const ws = await openLink(game.engineWsUrl, ticket(game));
    expect(await ws.closed).toMatchObject({ code: CloseCode.AlreadyConnected });
    expect(server.shards!.stats().reduce((a, s) => a + s.handed, 0)).toBe(handed);
    const before = received;
    await waitFor("frames still flowing over WebTransport", () => received > before);
    wt.close();
  }, 30_000);

  it("start a shard that dies again: its games end, the others' do not, and new games play", async () => {
    const a = await startGame();
    const b = await startGame();
    const la = await openLink(a.engineWsUrl, ticket(a));
    la.send(input(1));
    const lb = await openLink(b.engineWsUrl, ticket(b));
    lb.send(input(1));
    await waitFor("two games on two shards", () => server.shards!.stats().every((s) => s.games === 1));
    const victim = server.shards!.stats()[0]!;
    process.kill(victim.pid!, "SIGKILL");
    // One of the two connections belonged to the killed shard.
    const ended = await Promise.race([la.closed.then(() => la), lb.closed.then(() => lb)]);
    const survivor = ended === la ? lb : la;
    expect(survivor.open()).toBe(true);
    await waitFor("the shard to start again", () => {
      const s = server.shards!.stats()[0]!;
      return s.restarts === 1 && s.pid !== victim.pid;
    }, 20_000);
    // The dead shard's session is no longer counted by the group's link; the survivor's is.
    expect(server.shards!.stats().map((s) => s.sessions)).toEqual([0, 1]);
    survivor.close();
    const c = await startGame(EASY_SEED);
    const played = await playOver(c, EASY_FLAP_TICKS);
    expect(played).toMatchObject({ score: 7, lastTick: 402 });
  }, 60_000);
});
