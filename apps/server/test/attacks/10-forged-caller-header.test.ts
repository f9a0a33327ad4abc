// Attack: a player sends `x-flaplab-caller` (the header components name themselves with) so that
// their calls pass for calls between components and vanish from the call log. The header is
// believed only on calls that carry a component credential.
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { describe, expect, it } from "vitest";
import { readCallLog } from "../helpers.js";
import { monolithWithPlayer, outcome } from "./credentials-harness.js";

const t = monolithWithPlayer();

async function recordsFor(gameId: string, want: number): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = (await readCallLog(t.m.server.callLogFile)).filter((r) => r["gameId"] === gameId);
    if (found.length >= want || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a player forging the caller header", () => {
  it("is still refused, and every call is logged as an external call with its outcome", async () => {
    for (const protocol of ["connect", "grpc"] as const) {
      const score = t.m.client(ScoreService, protocol, { authorization: `Bearer ${t.token}`, "x-flaplab-caller": "engine.Tick" });
      const gameId = `forged-caller-${protocol}`;
      expect(await outcome(score.recordRun({ gameId, score: 100_000, ticks: 3 }))).toBe("permission_denied");
      const [record, ...more] = await recordsFor(gameId, 1);
      expect(more).toEqual([]);
      expect(record).toMatchObject({ src: "external", dst: "score", dstVerb: "RecordRun", code: "permission_denied", side: "server" });
    }
  });

  it("logs a player's permitted call with a forged header as external too", async () => {
    const score = t.m.client(ScoreService, "connect", { authorization: `Bearer ${t.token}`, "x-flaplab-caller": "engine.Tick" });
    const before = (await readCallLog(t.m.server.callLogFile)).filter((r) => r["dstVerb"] === "GetScores").length;
    await score.getScores({});
    const deadline = Date.now() + 5000;
    let after = before;
    while (after === before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = (await readCallLog(t.m.server.callLogFile)).filter((r) => r["dstVerb"] === "GetScores" && r["src"] === "external").length;
    }
    expect(after).toBe(before + 1);
  });
});
