// Attack: on a deployment of three engines (microservices-sharded, snapshots in Redis), open your
// own live game's stream, with its ticket, at an engine that does not hold it. Before, that engine
// admitted it, continued the game from its snapshot and claimed it without asking whether its
// holder was alive: two engines held the game until the first one's next snapshot was refused
// (4409). Now the ticket names the holder, so the other engine refuses the stream (403) before the
// upgrade; and ResumeGame moves a game only off an engine that is gone or draining. Full tier: it
// needs several processes and Redis.
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { Deployment } from "@flaplab/deployment";
import type { Topology } from "@flaplab/runtime";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startTopology } from "../helpers.js";
import { input, openLink } from "../play.js";

let deployment: Deployment;
let topology: Topology;
let initiator: ReturnType<typeof createClient<typeof InitiatorService>>;
let token: string;

beforeAll(async () => {
  const started = await startTopology("microservices-sharded");
  ({ deployment, topology } = started);
  token = await started.register("mallory");
  initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: started.url("initiator"), httpVersion: "1.1" }));
}, 120_000);

afterAll(async () => {
  await deployment?.stop();
});

function upgradeStatus(url: string, query: Record<string, string>): Promise<number | { closed: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}?${new URLSearchParams(query)}`);
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("open", () => {
      ws.send(input(2));
      const timer = setTimeout(() => {
        ws.close();
        resolve(101);
      }, 1500);
      ws.once("close", (code) => {
        clearTimeout(timer);
        resolve({ closed: code });
      });
    });
    ws.once("error", (err) => (ws.readyState === WebSocket.CLOSED ? undefined : reject(err)));
  });
}

describe("a live game's ticket at another engine", () => {
  it("is refused there before the upgrade; the holder plays on, alone", async () => {
    const auth = { headers: { authorization: `Bearer ${token}` } };
    const game = await initiator.startGame({}, auth);
    let frames = 0;
    let closedWith: number | undefined;
    const link = await openLink(game.engineWsUrl, { gameId: game.gameId, ticket: game.streamTicket }, () => frames++);
    void link.closed.then((c) => (closedWith = c.code));
    link.send(input(1));
    const deadline = Date.now() + 5000;
    while (frames < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const holder = topology.groups.find((g) => game.engineWsUrl.includes(`//${g.address}/`))!.name;
    const others = topology.groups.filter((g) => g.components.includes("engine") && g.name !== holder);
    const outcomes: Record<string, unknown> = {};
    for (const g of others) {
      outcomes[g.name] = await upgradeStatus(`ws://${g.address}/engine/v1/game`, { gameId: game.gameId, ticket: game.streamTicket });
    }
    // The game's holder is up: ResumeGame leaves the game there.
    const resumed = await initiator.resumeGame({ gameId: game.gameId }, auth);
    const framesBefore = frames;
    await new Promise((r) => setTimeout(r, 500));
    console.log(`game on ${holder}; its ticket at the others: ${JSON.stringify(outcomes)}; ResumeGame → ${resumed.game?.engineWsUrl === game.engineWsUrl ? "the holder" : resumed.game?.engineWsUrl}; holder's stream ${closedWith === undefined ? "still open" : `closed ${closedWith}`}`);
    for (const g of others) expect(outcomes[g.name]).toBe(403);
    expect(resumed.game?.engineWsUrl).toBe(game.engineWsUrl);
    expect(closedWith).toBeUndefined();
    expect(frames).toBeGreaterThan(framesBefore);
    link.close();
  }, 60_000);
});
