// Attack: as row 18, but with the engine's games on shard processes (FLAPLAB_ENGINE_SHARDS). The
// group's WebSocket link admits each engine stream and sends its socket to a shard, which serves it
// without counting it. Before, such sessions were in none of the group's shares and not under its
// process cap: one account held as many engine streams as it started games (each StartGame gives a
// ticket), one address as many as its accounts did, a game a second stream (101, then 4409 from the
// handler), and FLAPLAB_STREAM_MAX_SESSIONS never refused one. Now a session played in a shard
// counts in the group until the shard reports it closed: the player's oldest is closed 4430 past
// their share, the address's share is refused 429, a game's second engine stream 409, the cap 503;
// and a shard that dies gives back the share of every session it served. In the slow tier: the
// monolith starts a shard process (with tsx) and one is killed and started again.
import { InitiatorService, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type OpenedStream, openStream, startMonolith, type Monolith, until } from "./credentials-harness.js";

const PER_PLAYER = 3;
const PER_ADDRESS = 4;
const MAX_SESSIONS = 8;
const ENV = {
  FLAPLAB_ENGINE_SHARDS: "1",
  // Room for more unfinished games than the stream shares allow: the shares are what is tested.
  FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER: "20",
  FLAPLAB_STREAM_MAX_SESSIONS_PER_PLAYER: String(PER_PLAYER),
  FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS: String(PER_ADDRESS),
  FLAPLAB_STREAM_MAX_SESSIONS: String(MAX_SESSIONS),
};

let m: Monolith;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  m = await startMonolith({ env: ENV });
  for (const name of ["mallory", "eve", "trudy", "alice", "bob"]) tokens[name] = await m.register(name);
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

const startGame = (player: string) => m.client(InitiatorService, "connect", { authorization: `Bearer ${tokens[player]}` }).startGame({});



/** Opens the game's engine stream from `localAddress`: the open session, or the HTTP status it was refused with. */
const open = (game: StartGameResponse, localAddress: string) => openStream(game.engineWsUrl, game, localAddress);

function opened(o: OpenedStream | number): OpenedStream {
  if (typeof o === "number") throw new Error(`the engine stream was refused with ${o}`);
  return o;
}

const handed = () => m.server.shards!.stats().reduce((a, s) => a + s.handed, 0);
/** Sessions open in the shards, as the group counts them. */
const inShards = () => m.server.shards!.stats().reduce((a, s) => a + s.sessions, 0);
const isOpen = (o: OpenedStream) => o.ws.readyState === WebSocket.OPEN;

describe("engine streams played in a shard count in the group's shares", () => {
  const mallory: OpenedStream[] = [];
  const held: OpenedStream[] = [];

  it(`one player holds at most ${PER_PLAYER}: each newer session closes their oldest, in the shard, with 4430`, async () => {
    const before = handed();
    // One address per session: only the player's share is in play here.
    for (let i = 0; i < PER_PLAYER + 3; i++) mallory.push(opened(await open(await startGame("mallory"), `127.0.1.${i + 1}`)));
    expect(handed() - before).toBe(PER_PLAYER + 3);
    await until(() => !mallory.slice(0, 3).some(isOpen), 3000, "the player's oldest sessions to close");
    const replaced = await Promise.all(mallory.slice(0, 3).map((o) => o.closed));
    console.log(`mallory opened ${mallory.length} engine streams, all played in the shard; the oldest 3 closed with ${replaced.join(", ")}`);
    expect(replaced).toEqual([CloseCode.LimitReached, CloseCode.LimitReached, CloseCode.LimitReached]);
    expect(mallory.slice(3).every(isOpen)).toBe(true);
    await until(() => inShards() === PER_PLAYER, 3000, "the replaced sessions to be reported closed");
    held.push(...mallory.slice(3));
  }, 30_000);

  it("a game's second engine stream is refused 409 before the upgrade while the first plays in the shard", async () => {
    const game = await startGame("alice");
    const first = opened(await open(game, "127.0.2.1"));
    const before = handed();
    expect(await open(game, "127.0.2.2")).toBe(409);
    expect(handed()).toBe(before);
    expect(isOpen(first)).toBe(true);
    first.ws.close(1000);
    await until(() => inShards() === PER_PLAYER, 3000, "alice's session to be reported closed");
  });

  it(`one address holds at most ${PER_ADDRESS} over all its accounts: refused 429 past it`, async () => {
    const statuses: Array<number | "open"> = [];
    for (const player of ["eve", "eve", "eve", "trudy", "trudy"]) {
      const o = await open(await startGame(player), "127.0.3.1");
      statuses.push(typeof o === "number" ? o : "open");
      if (typeof o !== "number") held.push(o);
    }
    console.log(`eve ×3 and trudy ×2 from one address: ${statuses.join(", ")}`);
    expect(statuses).toEqual(["open", "open", "open", "open", 429]);
    expect(inShards()).toBe(PER_PLAYER + PER_ADDRESS);
  });

  it(`the group's cap (${MAX_SESSIONS}) counts them: the next is refused 503 until a shard session closes`, async () => {
    held.push(opened(await open(await startGame("alice"), "127.0.4.1")));
    const bobs = await startGame("bob");
    expect(await open(bobs, "127.0.4.2")).toBe(503);
    expect(inShards()).toBe(MAX_SESSIONS);
    const leaving = held.shift()!;
    leaving.ws.close(1000);
    await leaving.closed;
    await until(() => inShards() === MAX_SESSIONS - 1, 3000, "the closed session to be reported");
    held.push(opened(await open(bobs, "127.0.4.2")));
  });

  it("a shard that dies gives back the shares of the sessions it served", async () => {
    expect(held.every(isOpen)).toBe(true);
    const victim = m.server.shards!.stats()[0]!;
    process.kill(victim.pid!, "SIGKILL");
    await Promise.all(held.map((o) => o.closed));
    // The group learns of the exit a moment after the clients see their sockets close.
    await until(() => inShards() === 0, 5000, "the dead shard's sessions to be released");
    await until(() => m.server.shards!.stats()[0]!.restarts === 1 && m.server.shards!.stats()[0]!.pid !== victim.pid, 20_000, "the shard to start again");
    // Eve and trudy's address and mallory's share are free again.
    const again: OpenedStream[] = [];
    for (const [player, address] of [["eve", "127.0.3.1"], ["eve", "127.0.3.1"], ["trudy", "127.0.3.1"], ["trudy", "127.0.3.1"], ["mallory", "127.0.1.1"]] as const) {
      again.push(opened(await open(await startGame(player), address)));
    }
    for (const o of again) o.ws.close(1000);
    await Promise.all(again.map((o) => o.closed));
  }, 60_000);
});
