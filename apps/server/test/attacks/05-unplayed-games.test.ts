// Attack: one player creates thousands of games through InitiatorService.StartGame and never plays
// them. Before, the engine kept every one for 10 minutes (its sweep ran only when a game was
// created) and everybody else got resource_exhausted once the table was full. Now a player holds at
// most 3 unfinished games (a new one replaces their oldest unstarted one; with 3 started games they
// get resource_exhausted), and unstarted games are swept on a timer (here after 1.5 s).
import { EngineService, Key, PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { GameTable } from "@flaplab/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcome, startMonolith, type Monolith } from "./credentials-harness.js";

const UNPLAYED_TTL_MS = 1500;
const SWEEP_INTERVAL_MS = 250;
const ENV = {
  FLAPLAB_ENGINE_UNPLAYED_TTL_MS: String(UNPLAYED_TTL_MS),
  FLAPLAB_ENGINE_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
};

let m: Monolith;
let games: GameTable;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  m = await startMonolith({ env: ENV });
  games = m.server.mounted.games!;
  for (const name of ["mallory", "alice", "bob"]) tokens[name] = await m.register(name);
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

function initiator(player: string) {
  return m.client(InitiatorService, "connect", { authorization: `Bearer ${tokens[player]}` });
}

/** The engine's HandleInput as the initiator acting for `player`: what the game stream does with a key press. */
async function press(player: string, gameId: string) {
  const token = await (await m.keys()).components.tokenFor("initiator", "engine", player);
  return m.client(EngineService, "connect", { authorization: `Bearer ${token}` }).handleInput({ gameId, key: Key.SPACE, seq: 1 });
}

const gamesOf = (player: string) => [...games].filter((g) => g.owner.username === player);

describe("one player flooding StartGame", () => {
  it("holds at most 3 games however many they start, and another player still starts and plays", async () => {
    const started: string[] = [];
    const codes = new Map<string, number>();
    const flood = async (worker: number) => {
      for (let i = 0; i < 25; i++) {
        const r = await initiator("mallory").startGame({}).then((res) => res.gameId, (err: unknown) => err);
        if (typeof r === "string") started.push(r);
        const code = typeof r === "string" ? "ok" : await outcome(Promise.reject(r));
        codes.set(code, (codes.get(code) ?? 0) + 1);
        expect(gamesOf("mallory").length, `worker ${worker}, call ${i}`).toBeLessThanOrEqual(3);
      }
    };
    const flooding = Promise.all(Array.from({ length: 8 }, (_, w) => flood(w)));
    // In the middle of the flood, alice starts a game and plays it.
    const game = await initiator("alice").startGame({});
    expect((await press("alice", game.gameId)).state).toBe(PlayState.PLAYING);
    await flooding;
    console.log(`flood: 200 StartGame calls → ${JSON.stringify(Object.fromEntries(codes))}; mallory holds ${gamesOf("mallory").length} games, the table ${games.size}`);
    expect(codes.get("ok")).toBe(200);
    // At most her three newest games are kept: each new game replaced her oldest unstarted one
    // (and the sweep may already have taken some, if the flood took longer than their time to live).
    const kept = gamesOf("mallory").map((g) => g.id);
    expect(kept.length).toBeLessThanOrEqual(3);
    for (const id of kept) expect(started.slice(-3)).toContain(id);
    expect(games.get(game.gameId)?.state.phase).toBe("playing");
    expect((await initiator("alice").startGame({})).gameId).not.toBe("");
  });

  it("answers resource_exhausted once all 3 of a player's games have started, and others go on", async () => {
    for (let i = 0; i < 3; i++) {
      const { gameId } = await initiator("mallory").startGame({});
      expect((await press("mallory", gameId)).state).toBe(PlayState.PLAYING);
    }
    expect(gamesOf("mallory").filter((g) => g.startedAtMs !== undefined).length).toBe(3);
    const refused = await initiator("mallory").startGame({}).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(await outcome(Promise.reject(refused))).toBe("resource_exhausted");
    expect(String((refused as Error).message)).toMatch(/player mallory already has 3 games in progress \(at most 3\); finish one first/);
    expect(gamesOf("mallory").length).toBe(3);
    expect(await outcome(initiator("bob").startGame({}))).toBe("ok");
  });

  it("sweeps games nobody started after the configured time, without any new game being created", async () => {
    const unplayed = await Promise.all([initiator("bob").startGame({}), initiator("bob").startGame({})]);
    const alicePlaying = gamesOf("alice").find((g) => g.startedAtMs !== undefined)!;
    for (const g of unplayed) expect(games.has(g.gameId)).toBe(true);
    const t0 = Date.now();
    while (unplayed.some((g) => games.has(g.gameId)) && Date.now() - t0 < 10_000) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const waitedMs = Date.now() - t0;
    console.log(`unplayed games swept after ${waitedMs} ms (time to live ${UNPLAYED_TTL_MS} ms, sweep every ${SWEEP_INTERVAL_MS} ms)`);
    for (const g of unplayed) expect(games.has(g.gameId)).toBe(false);
    expect(waitedMs).toBeGreaterThanOrEqual(UNPLAYED_TTL_MS - 200);
    expect(waitedMs).toBeLessThan(UNPLAYED_TTL_MS + SWEEP_INTERVAL_MS + 2000);
    // Started games stay (their idle time is 10 minutes), and the server keeps serving.
    expect(games.has(alicePlaying.id)).toBe(true);
    expect(gamesOf("mallory").length).toBe(3);
    expect((await fetch(`${m.baseUrl}/healthz`)).status).toBe(200);
  });
});
