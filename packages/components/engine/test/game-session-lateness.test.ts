import type { GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { describe, expect, it } from "vitest";
import { GameTable, ManualTickClock, TickScheduler, courseOf, createGameSessionHandler, LATENESS_RANGE_US, LATENESS_SAMPLE_EVERY } from "../src/index.js";
import { fakeMusic, fakeScore, flush, input, memoryLogger } from "./fakes.js";
import { deadlyWorld, openWorld } from "./fixtures.js";
import { alice, setup, frames, summaryOf, start, tick } from "./stream-harness.js";

describe("game stream: lateness", () => {
  it("takes the summary's p50 lateness from the first tick and every 8th after it, and its max from every tick", async () => {
    const s = setup();
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    const t0 = s.clock.now();
    // Ticks 1, 9 and 17 (the sampled ones) 3 ms late, tick 5 7 ms late, the others on time.
    for (let k = 1; k <= 20; k++) {
      const late = (k - 1) % LATENESS_SAMPLE_EVERY === 0 ? 3 : k === 5 ? 7 : 0;
      s.clock.jump(t0 + 33 * k + late - s.clock.now());
      s.clock.runDue();
      await flush();
    }
    while (!session.isClosed) await tick(s);
    const summary = summaryOf(session) as GameSummary;
    // p50 at the histogram's 2 significant digits; the max exact.
    expect(summary.tickLatenessP50Us).toBeGreaterThanOrEqual(3000);
    expect(summary.tickLatenessP50Us).toBeLessThan(3030);
    expect(summary.tickLatenessMaxUs).toBe(7000);
    expect(summary.ticksSkipped).toBe(0);
  });

  it("counts sampled ticks later than LATENESS_RANGE_US as that in the p50, and keeps the exact max", async () => {
    const s = setup();
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    // Every wake-up 1.5 s after the one before: each tick runs 1.47–1.5 s late.
    for (let round = 0; round < 20; round++) {
      s.clock.jump(1500);
      s.clock.runDue();
      await flush();
    }
    while (!session.isClosed) await tick(s);
    const summary = summaryOf(session) as GameSummary;
    expect(summary.tickLatenessP50Us).toBeGreaterThanOrEqual(LATENESS_RANGE_US);
    expect(summary.tickLatenessP50Us).toBeLessThan(LATENESS_RANGE_US * 1.01);
    expect(summary.tickLatenessMaxUs).toBeGreaterThan(1_460_000);
    expect(summary.tickLatenessMaxUs).toBeLessThanOrEqual(1_500_000);
    expect(summary.ticksSkipped).toBeGreaterThan(0);
  });

  it("records tick lateness without allocating, however late the ticks run", async () => {
    // 200 games on one deadline; their sampled ticks run later and later (1, 3.1, 9.1, 30 ms), each
    // later than any before it. A histogram that grows on demand allocates a larger counts array
    // (an array buffer off the JS heap) for every game at each of those ticks: 13.5 KiB per game
    // over the four.
    const games = new GameTable({ maxGames: 500, maxGamesPerPlayer: 500 });
    const clock = new ManualTickClock(10_000);
    const scheduler = new TickScheduler({ clock });
    const handler = createGameSessionHandler({ games, scheduler, logger: memoryLogger(), music: fakeMusic().client, score: fakeScore().client });
    const sessions: MemoryStreamSession[] = [];
    for (let i = 0; i < 200; i++) {
      const id = `g${i}`;
      games.create({ id, owner: { username: alice.username, token: alice.token }, course: courseOf(openWorld()) });
      const session = new MemoryStreamSession({ gameId: id, principal: alice, keepSent: false });
      handler(session);
      input(session, 1);
      sessions.push(session);
    }
    await flush();
    const t0 = clock.now();
    const round = (k: number, lateMs: number) => {
      clock.jump(t0 + 33 * k + lateMs - clock.now());
      clock.runDue();
    };
    for (let k = 1; k <= 160; k++) round(k, 0);
    const buffersBefore = process.memoryUsage().arrayBuffers;
    const lateness = [1, 3.1, 9.1, 30];
    for (let k = 161; k <= 192; k++) round(k, (k - 1) % LATENESS_SAMPLE_EVERY === 0 ? (lateness[(k - 161) / LATENESS_SAMPLE_EVERY] as number) : 0);
    const buffersAfter = process.memoryUsage().arrayBuffers;
    expect(games.get("g0")?.state.tick).toBe(192);
    // Array-buffer bytes per game over its 32 measured ticks.
    expect((buffersAfter - buffersBefore) / 200).toBeLessThan(256);
    for (const session of sessions) expect(session.isClosed).toBe(false);
    scheduler.stop();
  });

  it("records tick lateness and skipped ticks in the summary", async () => {
    const s = setup();
    s.addGame("g1", deadlyWorld());
    const session = s.connect("g1");
    await start(session);
    s.clock.jump(33 + 5); // tick 1 5 ms late
    s.clock.runDue();
    await flush();
    s.clock.jump(33 * 3); // now at 137 ms: deadline 66 late by 71 → 99 skipped, 132 runs 5 ms late
    s.clock.runDue();
    await flush();
    while (!session.isClosed) await tick(s);
    const summary = summaryOf(session) as GameSummary;
    expect(summary.ticksSkipped).toBe(1);
    expect(summary.tickLatenessMaxUs).toBe(71_000);
    expect(summary.tickLatenessP50Us).toBe(0);
    expect(summary.framesSent).toBe(summary.ticks);
  });

  it("with real timers, sends 30 frames 33 ms apart on average", async () => {
    const games = new GameTable();
    games.create({ id: "rt", owner: { username: "alice", token: alice.token }, course: courseOf(openWorld()) });
    const handler = createGameSessionHandler({
      games,
      scheduler: new TickScheduler(),
      music: fakeMusic().client,
      score: fakeScore().client,
    });
    const session = new MemoryStreamSession({ gameId: "rt", principal: alice });
    handler(session);
    input(session, 1);
    while (session.sent.length < 30) await new Promise((r) => setTimeout(r, 5));
    session.leave();
    const at = session.sentAt;
    const period = (at[29]! - at[0]!) / 29;
    expect(period).toBeGreaterThan(32);
    expect(period).toBeLessThan(34);
    expect(frames(session).slice(0, 30).map((f) => f.tick)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });
});
