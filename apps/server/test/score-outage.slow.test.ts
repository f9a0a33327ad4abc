import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import type { Deployment } from "@flaplab/deployment";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTopology } from "./helpers.js";
import { EASY_FLAP_TICKS, EASY_SEED, playOver } from "./play.js";

// The score component goes down as games end: it stops answering (SIGSTOP) before game over, then
// it is killed (SIGKILL) and the deployment starts it again. No run may be lost or recorded twice.
const GAMES = 6;
let deployment: Deployment;
let url: (group: string) => string;
let register: (username: string) => Promise<string>;

beforeAll(async () => {
  ({ deployment, url, register } = await startTopology("microservices", { FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER: "100", FLAPLAB_STREAM_MAX_SESSIONS_PER_PLAYER: "200" }));
}, 90_000);

afterAll(async () => {
  await deployment?.stop();
});

describe("a score outage at game over", () => {
  it("keeps every run in the engine's outbox, says so in the summary, and records each once when score is back", async () => {
    const token = await register("outage");
    const headers = { authorization: `Bearer ${token}` };
    const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: url("initiator"), httpVersion: "1.1" }));
    const starts: StartGameResponse[] = [];
    for (let i = 0; i < GAMES; i++) starts.push(await initiator.startGame({ seed: EASY_SEED }, { headers }));
    const played = Promise.all(starts.map((g) => playOver(g, EASY_FLAP_TICKS)));
    // The games end at tick 402 (13.4 s): score stops answering well before.
    await new Promise((r) => setTimeout(r, 8000));
    const scorePid = deployment.pidOf("score")!;
    process.kill(scorePid, "SIGSTOP");
    const results = await played;
    process.kill(scorePid, "SIGKILL");

    for (const r of results) {
      expect(r).toMatchObject({ score: 7, lastTick: 402 });
      expect(r.summary).toMatchObject({ recorded: false, recordPending: true });
      expect(r.summary!.recordError).toMatch(/deadline_exceeded|unavailable/);
    }
    // The deployment starts score again; the engine's outbox records every run once.
    const scores = createClient(ScoreService, createConnectTransport({ baseUrl: url("score"), httpVersion: "1.1" }));
    const deadline = Date.now() + 45_000;
    let mine: Array<{ gameId: string; score: number; ticks: number }> = [];
    while (Date.now() < deadline) {
      try {
        const { ownRuns } = await scores.getScores({ limit: 100 }, { headers });
        mine = ownRuns.filter((r) => starts.some((s) => s.gameId === r.gameId));
        if (mine.length >= GAMES) break;
      } catch {
        // score is still starting
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(mine).toHaveLength(GAMES);
    expect(new Set(mine.map((r) => r.gameId)).size).toBe(GAMES);
    expect(mine.every((r) => r.score === 7 && r.ticks === 402)).toBe(true);
    expect(deployment.lines.some((l) => l.includes('"event":"outbox-delivered"'))).toBe(true);
  }, 120_000);
});
