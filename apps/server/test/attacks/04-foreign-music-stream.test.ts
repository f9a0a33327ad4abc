// Attack: player B knows player A's game id (it is no secret: it shows up in logs, traces and
// scoreboards) and opens A's music and engine streams with it, to take A's music stream before A
// does (A would get 4409 and no sounds), inject or steal A's sounds, or close A's session. B tries
// every credential B can have: B's own stream ticket (for B's own game) with B's own token, no
// ticket at all, a ticket for A's game signed with another key, an expired ticket for A's game
// signed with the real key, and A's game id with a player token where the ticket goes. Streams are
// admitted only with a ticket for the URL's game, issued by the initiator to the game's owner.
import { InitiatorService, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { Sound } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { createSigner, createStreamTicketSigner, loadAllComponentKeys } from "@flaplab/identity";
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attempt, EASY_FLAP_TICKS, EASY_SEED, openGame, openStream } from "../play.js";
import { startMonolith, type Monolith } from "./credentials-harness.js";

let m: Monolith;
let tokenA: string;
let tokenB: string;
let cert: Uint8Array;

beforeAll(async () => {
  m = await startMonolith();
  tokenA = await m.register("alice");
  tokenB = await m.register("bob");
  cert = m.server.streams!.certificate.sha256;
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

function startGame(token: string, seed?: bigint): Promise<StartGameResponse> {
  return m.client(InitiatorService, "connect", { authorization: `Bearer ${token}` }).startGame({ seed });
}

/**
 * Every query B can think of for A's game `gameIdA`, by what it holds, and how it must end: a valid
 * ticket (B's own) is let into a session and closed 4403 by the ownership check; anything else is
 * refused before the session opens.
 */
async function attacks(gameIdA: string, gameB: StartGameResponse): Promise<Array<[string, Record<string, string>, "4403" | "refused"]>> {
  const ticketKey = (await loadAllComponentKeys(m.dir)).tickets;
  const other = generateKeyPairSync("ed25519");
  const forged = (await createStreamTicketSigner({ privateKey: other.privateKey }).sign(gameIdA, "alice")).ticket;
  const longAgo = Date.now() - 10 * 60_000;
  const expired = (await createStreamTicketSigner({ privateKey: ticketKey.privateKey, now: () => longAgo }).sign(gameIdA, "alice")).ticket;
  const playerJwtAsTicket = (await createSigner({ privateKey: other.privateKey }).sign("alice")).token;
  return [
    ["B's own ticket (for B's game) and B's token", { gameId: gameIdA, ticket: gameB.streamTicket, token: tokenB }, "4403"],
    ["no ticket, B's token", { gameId: gameIdA, token: tokenB }, "refused"],
    ["no ticket, A's token", { gameId: gameIdA, token: tokenA }, "refused"],
    ["a player token as the ticket", { gameId: gameIdA, ticket: tokenB }, "refused"],
    ["a forged player token as the ticket", { gameId: gameIdA, ticket: playerJwtAsTicket }, "refused"],
    ["a ticket for A's game signed with another key", { gameId: gameIdA, ticket: forged }, "refused"],
    ["an expired ticket for A's game", { gameId: gameIdA, ticket: expired }, "refused"],
  ];
}

type Outcome = Awaited<ReturnType<typeof attempt>>;

/** Never admitted: refused before the session opened, or closed 4403 by the ownership check, as `expected`. */
function expectRefused(what: string, o: Outcome, expected: "4403" | "refused"): void {
  const ok = expected === "refused" ? o.refused : !o.refused && o.closeCode === CloseCode.PermissionDenied;
  expect(ok, `${what}: expected ${expected}, got ${JSON.stringify(o)}`).toBe(true);
}

describe("another player opening a game's streams", () => {
  it("is refused on music and engine, before and while the owner plays, and the owner's game is undisturbed and recorded", async () => {
    const gameA = await startGame(tokenA, EASY_SEED);
    const gameB = await startGame(tokenB);
    const tries = await attacks(gameA.gameId, gameB);

    // Before A opens anything: B would take A's music stream (A then gets 4409) or A's game.
    for (const [what, query, expected] of tries) {
      expectRefused(`music, before A: ${what}`, await attempt(gameA.musicUrl, query, cert, 1000), expected);
      expectRefused(`engine, before A: ${what}`, await attempt(gameA.engineUrl, query, cert, 1000), expected);
    }
    // B's own ticket is good for B's own game (the refusals above are about the game, not the ticket).
    const own = await openStream(gameB.musicUrl, { gameId: gameB.gameId, ticket: gameB.streamTicket }, cert);
    own.close();

    // A opens both streams: nothing of B's holds either.
    let currentTick = 0;
    let during: Promise<Outcome[]> | undefined;
    let lastTickDuring = 0;
    const gameOfA = await openGame(gameA, EASY_FLAP_TICKS, {
      link: "webtransport",
      certSha256: cert,
      music: true,
      onTick: (tick) => {
        currentTick = tick;
        if (during !== undefined || tick < 20) return;
        during = (async () => {
          const outcomes: Outcome[] = [];
          for (const [, query] of tries) {
            outcomes.push(await attempt(gameA.musicUrl, query, cert, 1000));
            outcomes.push(await attempt(gameA.engineUrl, query, cert, 1000));
          }
          lastTickDuring = currentTick;
          return outcomes;
        })();
      },
    });

    // While A plays, B tries again (music with B's own ticket, and every other way, on both
    // streams), one attempt after the other so that A's flaps are not starved of CPU.
    const played = await gameOfA.play();
    expect(during).toBeDefined();
    const outcomes = await during!;
    tries.forEach(([what, , expected], i) => {
      expectRefused(`music, during A's game: ${what}`, outcomes[2 * i]!, expected);
      expectRefused(`engine, during A's game: ${what}`, outcomes[2 * i + 1]!, expected);
    });
    // The attempts were made while A's game was still running.
    expect(lastTickDuring).toBeGreaterThan(20);
    expect(lastTickDuring).toBeLessThan(402);

    // A's game ran to its end, every tick and every sound arrived on A's own sessions.
    expect({ score: played.score, lastTick: played.lastTick, frames: played.frames }).toEqual({ score: 7, lastTick: 402, frames: 402 });
    expect(played.summary).toMatchObject({ score: 7, ticks: 402, recorded: true });
    expect(played.close).toMatchObject({ code: CloseCode.Normal, reason: "game over" });
    expect(played.clips.filter((c) => c.sound === Sound.FLAP)).toHaveLength(14);
    expect(played.clips.filter((c) => c.sound === Sound.POINT)).toHaveLength(7);
    expect(played.clips.at(-1)?.sound).toBe(Sound.DIE);

    const scores = m.client(ScoreService, "connect", { authorization: `Bearer ${tokenA}` });
    const { ownRuns } = await scores.getScores({});
    expect(ownRuns.find((r) => r.gameId === gameA.gameId)).toMatchObject({ score: 7, ticks: 402 });
  }, 90_000);

  it("cannot open a game's music stream with the game's ticket used on another game id", async () => {
    const gameA = await startGame(tokenA);
    const gameA2 = await startGame(tokenA);
    // A's own ticket for one game does not open A's other game: a ticket is for one game.
    const o = await attempt(gameA2.musicUrl, { gameId: gameA2.gameId, ticket: gameA.streamTicket }, cert, 1000);
    expect(o).toMatchObject({ refused: false, closeCode: CloseCode.PermissionDenied });
    const e = await attempt(gameA2.engineUrl, { gameId: gameA2.gameId, ticket: gameA.streamTicket }, cert, 1000);
    expect(e).toMatchObject({ refused: false, closeCode: CloseCode.PermissionDenied });
  });
});
