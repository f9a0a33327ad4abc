// A game that outlives the player's token: the token lives 2 s (FLAPLAB_AUTH_TOKEN_TTL_S), the
// game about 13 s. The streams were opened with the stream ticket, which only has to be valid when
// they open; the engine records the run with its own component credential, not with the player's
// token. The run must be recorded, and the expired token must be refused meanwhile.
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EASY_FLAP_TICKS, EASY_SEED, playOver } from "../play.js";
import { outcome, startMonolith, type Monolith } from "./credentials-harness.js";

const TOKEN_TTL_S = 2;
let m: Monolith;
let saved: string | undefined;

beforeAll(async () => {
  saved = process.env["FLAPLAB_AUTH_TOKEN_TTL_S"];
  process.env["FLAPLAB_AUTH_TOKEN_TTL_S"] = String(TOKEN_TTL_S);
  m = await startMonolith();
}, 60_000);

afterAll(async () => {
  if (saved === undefined) delete process.env["FLAPLAB_AUTH_TOKEN_TTL_S"];
  else process.env["FLAPLAB_AUTH_TOKEN_TTL_S"] = saved;
  await m?.stop();
});

describe("a game that outlives the player's token", () => {
  it("plays to its end and its run is recorded, though the token expired during the game", async () => {
    const token = await m.register("slowpoke");
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { iat: number; exp: number };
    expect(claims.exp - claims.iat).toBe(TOKEN_TTL_S);
    const expiresAtMs = claims.exp * 1000;

    const game = await m.client(InitiatorService, "connect", { authorization: `Bearer ${token}` }).startGame({ seed: EASY_SEED });
    const cert = m.server.streams!.certificate.sha256;

    const scoresWith = (t: string) => m.client(ScoreService, "connect", { authorization: `Bearer ${t}` });
    // Mid-game, once the token (plus the verifier's 5 s clock tolerance) has expired: it is refused.
    let midGame: Promise<string> | undefined;
    let tickWhenExpired = 0;
    const played = await playOver(game, EASY_FLAP_TICKS, {
      link: "webtransport",
      certSha256: cert,
      music: true,
      onTick: (tick) => {
        if (midGame === undefined && Date.now() > expiresAtMs + 6_000) {
          tickWhenExpired = tick;
          midGame = outcome(scoresWith(token).getScores({}));
        }
      },
    });
    expect(midGame, "the game ended before the token expired").toBeDefined();
    expect(await midGame).toBe("unauthenticated");
    expect(tickWhenExpired).toBeGreaterThan(0);
    expect(tickWhenExpired).toBeLessThan(402);

    expect({ score: played.score, lastTick: played.lastTick }).toEqual({ score: 7, lastTick: 402 });
    expect(played.summary).toMatchObject({ score: 7, ticks: 402, recorded: true });
    expect(played.close).toMatchObject({ code: CloseCode.Normal, reason: "game over" });

    // The score component has the run: read back with a fresh login.
    const auth = m.client(AuthService, "connect", {});
    const fresh = (await auth.login({ username: "slowpoke", password: "a long enough password" })).session!.token;
    const { ownRuns } = await scoresWith(fresh).getScores({});
    expect(ownRuns.find((r) => r.gameId === game.gameId)).toMatchObject({ score: 7, ticks: 402, seed: EASY_SEED });
  }, 90_000);
});
