// Attack: one account starts a game, presses once, closes the stream, and does it again and again;
// then it continues every one of those games with InitiatorService.ResumeGame, or by opening their
// streams with the tickets it still holds. Before, a continued game went back into the engine's
// table without the per-player limit (3) and stayed "playing" for the idle time (10 min): one
// account filled the engine (FLAPLAB_ENGINE_MAX_GAMES=20 here) and another player's StartGame got
// "the engine already holds 20 games". Now a continued game counts against its player's limit as a
// new one does (it replaces their oldest game nobody plays, else resource_exhausted, or close 4430
// on a stream), and one that nobody plays on is swept as an unplayed game is.
import { InitiatorService, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { GameTable } from "@flaplab/engine";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { input, type Link, openLink } from "../play.js";
import { outcome, startMonolith, type Monolith, until } from "./credentials-harness.js";

const MAX_GAMES = 20;
const UNPLAYED_TTL_MS = 1500;
const SWEEP_INTERVAL_MS = 250;
const ENV = {
  FLAPLAB_ENGINE_MAX_GAMES: String(MAX_GAMES),
  FLAPLAB_ENGINE_UNPLAYED_TTL_MS: String(UNPLAYED_TTL_MS),
  FLAPLAB_ENGINE_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
};

let m: Monolith;
let games: GameTable;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  m = await startMonolith({ env: ENV });
  games = m.server.mounted.games!;
  for (const name of ["mallory", "alice"]) tokens[name] = await m.register(name);
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

const initiator = (player: string) => m.client(InitiatorService, "connect", { authorization: `Bearer ${tokens[player]}` });
const gamesOf = (player: string) => [...games].filter((g) => g.owner.username === player);


/** Opens a game's engine stream over WebSocket and presses once; resolves at its first frame. */
async function playing(game: StartGameResponse): Promise<Link> {
  let frames = 0;
  const link = await openLink(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket }, () => frames++);
  link.send(input(1));
  await until(() => frames > 0 && games.get(game.gameId)?.startedAtMs !== undefined, 5000, `game ${game.gameId} playing`);
  return link;
}

/** Starts a game, plays it for a frame and walks away: the game leaves the table, its snapshot stays for ResumeGame. */
async function abandoned(): Promise<StartGameResponse> {
  const game = await initiator("mallory").startGame({});
  const link = await playing(game);
  link.close();
  await link.closed;
  await until(() => !games.has(game.gameId), 5000, `game ${game.gameId} left`);
  return game;
}

describe("one account continuing its abandoned games", () => {
  const left: StartGameResponse[] = [];

  it("with ResumeGame holds at most 3 games however many it continues; another player still starts a game", async () => {
    for (let i = 0; i < MAX_GAMES + 4; i++) left.push(await abandoned());
    const codes = new Map<string, number>();
    let mostHeld = 0;
    for (const game of left) {
      const code = await outcome(initiator("mallory").resumeGame({ gameId: game.gameId }));
      codes.set(code, (codes.get(code) ?? 0) + 1);
      mostHeld = Math.max(mostHeld, gamesOf("mallory").length);
    }
    const alice = await outcome(initiator("alice").startGame({}));
    console.log(
      `${left.length} abandoned games resumed: ${JSON.stringify(Object.fromEntries(codes))}; mallory held at most ${mostHeld} games, ` +
        `the table ${games.size} (at most ${MAX_GAMES}); alice's StartGame: ${alice}`,
    );
    expect(mostHeld).toBeLessThanOrEqual(3);
    expect(alice).toBe("ok");
    expect(games.size).toBeLessThan(MAX_GAMES);
  }, 60_000);

  it("sweeps continued games nobody plays on as unplayed, not after the 10-minute idle time", async () => {
    const held = gamesOf("mallory").map((g) => g.id);
    expect(held.length).toBeGreaterThan(0);
    const ms = await until(() => held.every((id) => !games.has(id)), UNPLAYED_TTL_MS + SWEEP_INTERVAL_MS + 3000, "continued games swept");
    console.log(`continued games nobody played on swept after ${ms} ms (unplayed time to live ${UNPLAYED_TTL_MS} ms)`);
  });

  it("by opening their streams counts them too: with 3 games being played, a 4th is closed 4430 and not taken in", async () => {
    const links: Link[] = [];
    for (let i = 0; i < 3; i++) links.push(await playing(await initiator("mallory").startGame({})));
    expect(gamesOf("mallory").filter((g) => g.startedAtMs !== undefined)).toHaveLength(3);
    // A ticket of an abandoned game is still good (60 s): the engine continues it from its snapshot when its stream opens.
    const game = left.at(-1)!;
    const link = await openLink(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket });
    const closed = await Promise.race([link.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000))]);
    console.log(`stream of a 4th game with 3 being played: ${JSON.stringify(closed ?? "still open after 3 s")}; mallory holds ${gamesOf("mallory").length}`);
    expect(closed?.code).toBe(CloseCode.LimitReached);
    expect(closed?.reason).toMatch(/player mallory already has 3 games in progress \(at most 3\)/);
    expect(games.has(game.gameId)).toBe(false);
    expect(gamesOf("mallory")).toHaveLength(3);
    // ResumeGame of the same game: refused the same way.
    expect(await outcome(initiator("mallory").resumeGame({ gameId: game.gameId }))).toBe("resource_exhausted");
    for (const l of links) l.close();
    await Promise.all(links.map((l) => l.closed));
    expect(await outcome(initiator("alice").startGame({}))).toBe("ok");
  });
});
