// Attack: one account calls StartGame again and again and opens each game's engine and music
// stream (here over the plain WebSocket link on the RPC port). Before, the only cap was the
// process's (FLAPLAB_STREAM_MAX_SESSIONS, 24 here), with no share per game, player or address, and
// idle sessions were held 60 s: the account filled the cap and another player's engine stream got
// 503. Now a game has at most one session of each kind, a player at most 8 (a newer session
// replaces their oldest: closed 4430), and an address at most FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS
// (10 here; refused 429).
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type OpenedStream, openStream, startMonolith, type Monolith } from "./credentials-harness.js";

const ENV = { FLAPLAB_STREAM_MAX_SESSIONS: "24", FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS: "10" };
const GAMES = 15;

let m: Monolith;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  m = await startMonolith({ env: ENV });
  for (const name of ["mallory", "eve", "alice"]) tokens[name] = await m.register(name);
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

const startGame = (player: string) => m.client(InitiatorService, "connect", { authorization: `Bearer ${tokens[player]}` }).startGame({});



const isOpen = (o: OpenedStream | number): o is OpenedStream => typeof o !== "number";

describe("one account opening the streams of game after game", () => {
  const mine: OpenedStream[] = [];

  it("holds at most 8 sessions (its oldest replaced, closed 4430); another player's streams still open", async () => {
    const refused: number[] = [];
    for (let i = 0; i < GAMES; i++) {
      const game = await startGame("mallory");
      for (const url of [game.engineWsUrl, game.musicWsUrl]) {
        const o = await openStream(url, game);
        if (isOpen(o)) mine.push(o);
        else refused.push(o);
      }
    }
    // The replaced sessions close at once; poll until they have (bounded).
    const deadline = Date.now() + 3000;
    while (mine.filter((o) => o.ws.readyState === WebSocket.OPEN).length > 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const stillOpen = mine.filter((o) => o.ws.readyState === WebSocket.OPEN).length;
    const alice = await startGame("alice");
    const aliceEngine = await openStream(alice.engineWsUrl, alice, "127.0.0.2");
    const aliceMusic = await openStream(alice.musicWsUrl, alice, "127.0.0.2");
    console.log(
      `${GAMES} games × 2 sessions: ${mine.length} opened, ${refused.length} refused (${[...new Set(refused)].join(", ")}), ${stillOpen} still open; ` +
        `alice's engine stream: ${isOpen(aliceEngine) ? "open" : aliceEngine}, music: ${isOpen(aliceMusic) ? "open" : aliceMusic}`,
    );
    expect(stillOpen).toBeLessThanOrEqual(8);
    expect(isOpen(aliceEngine) && isOpen(aliceMusic)).toBe(true);
    const closedCodes = await Promise.all(mine.filter((o) => o.ws.readyState !== WebSocket.OPEN).map((o) => o.closed));
    expect(closedCodes.every((c) => c === CloseCode.LimitReached)).toBe(true);
    for (const o of [aliceEngine, aliceMusic]) if (isOpen(o)) o.ws.close();
  }, 60_000);

  it("gives a game one session of each kind: a second with the same ticket is refused 409 before the upgrade", async () => {
    const game = await startGame("mallory");
    const first = await openStream(game.engineWsUrl, game);
    expect(isOpen(first)).toBe(true);
    expect(await openStream(game.engineWsUrl, game)).toBe(409);
    const music = await openStream(game.musicWsUrl, game);
    expect(isOpen(music)).toBe(true);
    expect(await openStream(game.musicWsUrl, game)).toBe(409);
    for (const o of [first, music]) if (isOpen(o)) mine.push(o);
  });

  it("gives an address a bounded share over all its accounts: refused 429 past it, another address is not", async () => {
    const before = mine.filter((o) => o.ws.readyState === WebSocket.OPEN).length;
    const statuses: Array<number | "open"> = [];
    for (let i = 0; i < 4; i++) {
      const game = await startGame("eve");
      for (const url of [game.engineWsUrl, game.musicWsUrl]) {
        const o = await openStream(url, game);
        statuses.push(isOpen(o) ? "open" : o);
        if (isOpen(o)) mine.push(o);
      }
    }
    console.log(`mallory holds ${before} sessions from 127.0.0.1; eve's 8 from there: ${statuses.join(", ")}`);
    expect(statuses.filter((s) => s === "open")).toHaveLength(10 - before);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8 - (10 - before));
    const alice = await startGame("alice");
    expect(isOpen(await openStream(alice.engineWsUrl, alice, "127.0.0.2"))).toBe(true);
    for (const o of mine) o.ws.close();
  });
});
