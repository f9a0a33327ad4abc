import { afterEach, describe, expect, it, vi } from "vitest";
import { GameTable, courseOf, gameTableOptionsFromEnv } from "../src/index.js";
import { openWorld } from "./fixtures.js";
import { alice } from "./table-helpers.js";

describe("GameTable sweep timer", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("removes games nobody started after the unplayed time to live, with no create needed", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const info = vi.fn();
    const games = new GameTable({ unplayedTtlMs: 60_000, sweepIntervalMs: 10_000, logger: { info, warn: vi.fn() } });
    const course = courseOf(openWorld());
    games.create({ id: "unplayed", owner: alice, course });
    games.create({ id: "played", owner: alice, course });
    games.input("played", "alice", { seq: 1, clientTimeMs: 0 });
    vi.advanceTimersByTime(59_999);
    expect(games.has("unplayed")).toBe(true);
    vi.advanceTimersByTime(10_001);
    expect(games.has("unplayed")).toBe(false);
    expect(games.has("played")).toBe(true);
    expect(games.unfinishedCount("alice")).toBe(1);
    expect(info).toHaveBeenCalledWith(
      { event: "games-swept", finished: 0, unplayed: 1, idle: 0, games: 1 },
      "removed expired games",
    );
    games.close();
  });

  it("stops on close, and runs no timer with sweepIntervalMs 0", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const course = courseOf(openWorld());
    const closed = new GameTable({ unplayedTtlMs: 1000, sweepIntervalMs: 100 });
    closed.create({ id: "g", owner: alice, course });
    closed.close();
    const manual = new GameTable({ unplayedTtlMs: 1000, sweepIntervalMs: 0 });
    manual.create({ id: "g", owner: alice, course });
    vi.advanceTimersByTime(5000);
    expect(closed.has("g")).toBe(true);
    expect(manual.has("g")).toBe(true);
    expect(manual.sweep()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects bad options", () => {
    expect(() => new GameTable({ maxGamesPerPlayer: 0 })).toThrow(/maxGamesPerPlayer/);
    expect(() => new GameTable({ sweepIntervalMs: -1 })).toThrow(/sweepIntervalMs/);
    expect(() => new GameTable({ unplayedTtlMs: 1.5 })).toThrow(/unplayedTtlMs/);
  });
});

describe("gameTableOptionsFromEnv", () => {
  it("reads FLAPLAB_ENGINE_* whole numbers and names a bad one", () => {
    expect(gameTableOptionsFromEnv({})).toEqual({});
    expect(
      gameTableOptionsFromEnv({
        FLAPLAB_ENGINE_MAX_GAMES: "500",
        FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER: "2",
        FLAPLAB_ENGINE_UNPLAYED_TTL_MS: "1500",
        FLAPLAB_ENGINE_SWEEP_INTERVAL_MS: "0",
      }),
    ).toEqual({ maxGames: 500, maxGamesPerPlayer: 2, unplayedTtlMs: 1500, sweepIntervalMs: 0 });
    expect(() => gameTableOptionsFromEnv({ FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER: "0" })).toThrow(
      'FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER must be a whole number ≥ 1, got "0"',
    );
    expect(() => gameTableOptionsFromEnv({ FLAPLAB_ENGINE_UNPLAYED_TTL_MS: "1e3" })).toThrow(/FLAPLAB_ENGINE_UNPLAYED_TTL_MS/);
  });
});
