// Attack: abandon games again and again on a one-engine deployment (start, press, close the
// stream). Each abandoned game's snapshot (≈ 2 KB) stays in the engine's snapshot store so that its
// player can resume it. Before, the in-process store (MemorySnapshotStore) never expired an entry
// and removed one only at game over: memory grew without bound, and every abandoned game could be
// resumed forever. Now every store forgets a game FLAPLAB_SNAPSHOT_TTL_MS after its latest write
// (15 min by default, 1.5 s here), as the Redis store's keys do.
import { InitiatorService, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { GameTable } from "@flaplab/engine";
import type { MemorySnapshotStore } from "@flaplab/snapshots";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { input, openLink } from "../play.js";
import { outcome, startMonolith, type Monolith, until } from "./credentials-harness.js";

const SNAPSHOT_TTL_MS = 1500;
const ENV = { FLAPLAB_SNAPSHOT_TTL_MS: String(SNAPSHOT_TTL_MS) };
const GAMES = 12;

let m: Monolith;
let games: GameTable;
let store: MemorySnapshotStore;
let token: string;

beforeAll(async () => {
  m = await startMonolith({ env: ENV });
  games = m.server.mounted.games!;
  store = m.server.mounted.snapshotStore as MemorySnapshotStore;
  token = await m.register("mallory");
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

const initiator = () => m.client(InitiatorService, "connect", { authorization: `Bearer ${token}` });


function countOf(codes: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of codes) counts[c] = (counts[c] ?? 0) + 1;
  return counts;
}

/** Starts a game, plays one frame of it and closes its stream: abandoned, its snapshot in the store. */
async function abandon(): Promise<StartGameResponse> {
  const game = await initiator().startGame({});
  let frames = 0;
  const link = await openLink(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket }, () => frames++);
  link.send(input(1));
  await until(() => frames > 0, 5000, "first frame");
  link.close();
  await link.closed;
  await until(async () => !games.has(game.gameId) && (await store.read(game.gameId)) !== undefined, 5000, "snapshot stored");
  return game;
}

describe("abandoned games' snapshots", () => {
  it("expire from the in-process store after FLAPLAB_SNAPSHOT_TTL_MS: not resumable, not held in memory", async () => {
    expect(store.kind).toBe("memory");
    const first = await abandon();
    // Within its time to live the game can be resumed (and abandoned again: ResumeGame wrote nothing new).
    expect(await outcome(initiator().resumeGame({ gameId: first.gameId }))).toBe("ok");
    games.delete(first.gameId);
    const abandoned = [first];
    for (let i = 1; i < GAMES; i++) abandoned.push(await abandon());
    const heldBefore = store.size;
    // The last one's time to live runs out last.
    const last = abandoned.at(-1)!;
    const ms = await until(async () => (await store.read(last.gameId)) === undefined, SNAPSHOT_TTL_MS + 5000, "last snapshot expired");
    const codes = await Promise.all(abandoned.map((g) => outcome(initiator().resumeGame({ gameId: g.gameId }))));
    // One more abandoned game's write purges the expired entries from memory.
    const fresh = await abandon();
    console.log(
      `${GAMES} abandoned games: store held ${heldBefore}; the last expired ${ms} ms after its write check began; ResumeGame then: ` +
        `${JSON.stringify(countOf(codes))}; store holds ${store.size} after one more`,
    );
    expect(heldBefore).toBeGreaterThanOrEqual(GAMES);
    expect(codes.every((c) => c === "not_found")).toBe(true);
    expect(store.size).toBe(1);
    expect(await outcome(initiator().resumeGame({ gameId: fresh.gameId }))).toBe("ok");
  }, 60_000);
});
