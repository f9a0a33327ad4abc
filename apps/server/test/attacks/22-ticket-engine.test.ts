// Attack: open your own game's stream at an engine other than the one that holds it. Before, a
// stream ticket named the game and the player only: any engine of the deployment admitted it,
// continued the game from the snapshot store and claimed it, bypassing placement, while the
// holder still played it. Now a ticket names its engine (the initiator signs StartGame's and
// ResumeGame's for the engine it placed the game on, a drained engine its Moved ticket for the
// target) and an engine admits a game stream only with a ticket naming it: anything else is
// refused 403 before the upgrade. (The two-engine form, with Redis, is 23-ticket-engine.slow.test.ts.)
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMonolith, upgradeStatus, type Monolith } from "./credentials-harness.js";

let m: Monolith;
let token: string;

beforeAll(async () => {
  m = await startMonolith();
  token = await m.register("mallory");
}, 60_000);

afterAll(async () => {
  await m?.stop();
});


describe("a stream ticket", () => {
  it("opens the game stream only at the engine it names", async () => {
    const game = await m.client(InitiatorService, "connect", { authorization: `Bearer ${token}` }).startGame({});
    // Tickets signed with the stream-ticket key (as an initiator of a deployment with other engines
    // would, or as tickets were before they named an engine), for the same game and player.
    const signer = (await m.keys()).tickets;
    const forOther = (await signer.sign(game.gameId, "mallory", "engine-2")).ticket;
    const forNone = (await signer.sign(game.gameId, "mallory")).ticket;
    const statuses = {
      own: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket }),
      otherEngine: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: forOther }),
      noEngine: await upgradeStatus(game.engineWsUrl, { gameId: game.gameId, ticket: forNone }),
      // Music has one server per deployment: the ticket's engine does not matter there.
      music: await upgradeStatus(game.musicWsUrl, { gameId: game.gameId, ticket: forOther }),
    };
    console.log(`engine stream upgrades: ${JSON.stringify(statuses)}`);
    expect(statuses).toEqual({ own: 101, otherEngine: 403, noEngine: 403, music: 101 });
  });
});
