// Attack: a component credential captured from one call, replayed against another component; a
// credential or a stream ticket signed by whoever holds one component's key. Before, every process
// held the one components' key, which signed every credential and every stream ticket, and a
// credential's audience was one generic service audience: the engine's credential on its way to
// the score component was good at music too, and anyone holding music's key could sign as the
// initiator or admit themselves to any game's streams. Now each component signs with its own key,
// a credential names its callee, a key signs only for its own component, and stream tickets have a
// key no component signs its calls with (held where the initiator and the engine run).
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { promisify } from "node:util";
import { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { MusicService, Sound } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { createServiceSigner, createStreamTicketSigner, loadAllComponentKeys } from "@flaplab/identity";
import { generateWorld } from "@flaplab/worldgen";
import { describe, expect, it } from "vitest";
import { monolithWithPlayer, outcome, upgradeStatus } from "./credentials-harness.js";

const t = monolithWithPlayer("mallory");

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });


describe("a component credential", () => {
  it("is good only at the callee it names: the engine's credential for score is refused at music, and back", async () => {
    const { components } = await t.m.keys();
    // What the engine sends with RecordRun and with PlayMusic (on the call graph both).
    const forScore = await components.tokenFor("engine", "score", "mallory");
    const forMusic = await components.tokenFor("engine", "music", "mallory");
    const playMusic = (credential: string) => t.m.client(MusicService, "grpc", bearer(credential)).playMusic({ gameId: "no-stream", sound: Sound.FLAP, inputSeq: 1, tick: 1 });
    const recordRun = (credential: string) => t.m.client(ScoreService, "connect", bearer(credential)).recordRun({ gameId: `r-${Date.now()}`, score: 1, ticks: 40, seed: 1n });
    const got = {
      "engine→music, its own": await outcome(playMusic(forMusic)),
      "engine→music, the score credential replayed": await outcome(playMusic(forScore)),
      "engine→score, its own": await outcome(recordRun(forScore)),
      "engine→score, the music credential replayed": await outcome(recordRun(forMusic)),
    };
    console.log(`credentials replayed at another callee: ${JSON.stringify(got)}`);
    expect(got).toEqual({
      // Admitted: the call reaches the music handler, which has no stream for that game.
      "engine→music, its own": "not_found",
      "engine→music, the score credential replayed": "unauthenticated",
      "engine→score, its own": "ok",
      "engine→score, the music credential replayed": "unauthenticated",
    });
  });

  it("replayed with curl (Connect JSON over HTTP/1.1) at another callee gets 401 unauthenticated; at its own callee it is served", async () => {
    const forScore = await (await t.m.keys()).components.tokenFor("engine", "score", "mallory");
    const curl = async (path: string, body: object): Promise<{ status: number; body: string }> => {
      const { stdout } = await promisify(execFile)("curl", [
        "-sS", "-X", "POST", "-H", "content-type: application/json", "-H", `authorization: Bearer ${forScore}`,
        "-d", JSON.stringify(body), "-w", "\n%{http_code}", `${t.m.baseUrl}${path}`,
      ]);
      const cut = stdout.lastIndexOf("\n");
      return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
    };
    const atMusic = await curl("/flaplab.music.v1.MusicService/PlayMusic", { gameId: "no-stream", sound: "SOUND_FLAP", inputSeq: 1, tick: 1 });
    const atScore = await curl("/flaplab.score.v1.ScoreService/RecordRun", { gameId: `curl-${Date.now()}`, score: 2, ticks: 80, seed: "1" });
    console.log(`curl: music ${atMusic.status} ${atMusic.body}; score ${atScore.status} ${atScore.body}`);
    expect(atMusic.status).toBe(401);
    expect(JSON.parse(atMusic.body)).toMatchObject({ code: "unauthenticated", message: "invalid token: a credential for score, not for music" });
    expect(atScore.status).toBe(200);
  });

  it("signed with one component's key in another's name, or for a method players call, is refused", async () => {
    const keys = await loadAllComponentKeys(t.m.dir);
    // Someone holding only music's key, posing as the initiator (which may start games): a
    // credential that names the initiator, signed with music's key (its kid music's).
    const posing = await createServiceSigner({ keys: new Map([["initiator", keys.signing.get("music")!.privateKey]]) }).tokenFor("initiator", "engine", "mallory");
    const world = generateWorld(6977347407732442987n, { width: 480, height: 640 });
    const startGame = (credential: string) =>
      t.m.client(EngineService, "connect", bearer(credential)).startGame({ gameId: `g-${Date.now()}`, world, bird: { width: 34, height: 24 } });
    // The engine's own key, for a method of players (the initiator's StartGame): no component calls it.
    const asEngine = await createServiceSigner({ keys: new Map([["engine", keys.signing.get("engine")!.privateKey]]) }).tokenFor("engine", "initiator", "mallory");
    const got = {
      posing: await outcome(startGame(posing)),
      playersMethod: await outcome(t.m.client(InitiatorService, "connect", bearer(asEngine)).startGame({})),
    };
    console.log(`forged component credentials: ${JSON.stringify(got)}`);
    expect(got).toEqual({ posing: "unauthenticated", playersMethod: "permission_denied" });
  });
});

describe("a stream ticket", () => {
  it("is made only with the stream-ticket key: a component's key or credential opens no stream", async () => {
    const game = await t.m.client(InitiatorService, "connect", bearer(t.token)).startGame({});
    const keys = await loadAllComponentKeys(t.m.dir);
    const withMusicKey = (await createStreamTicketSigner({ privateKey: keys.signing.get("music")!.privateKey }).sign(game.gameId, "mallory", "monolith")).ticket;
    const credential = await (await t.m.keys()).components.tokenFor("initiator", "engine", "mallory");
    const stranger = (await createStreamTicketSigner({ privateKey: generateKeyPairSync("ed25519").privateKey }).sign(game.gameId, "mallory", "monolith")).ticket;
    const statuses = {
      own: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket }),
      musicKey: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: withMusicKey }),
      musicKeyAtMusic: await upgradeStatus(game.musicWsUrl, { gameId: game.gameId, ticket: withMusicKey }),
      componentCredential: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: credential }),
      strangerKey: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: stranger }),
    };
    console.log(`stream upgrades: ${JSON.stringify(statuses)}`);
    expect(statuses).toEqual({ own: 101, musicKey: 401, musicKeyAtMusic: 401, componentCredential: 401, strangerKey: 401 });
  });
});
