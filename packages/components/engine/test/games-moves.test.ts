import { Code } from "@connectrpc/connect";
import { viewOf } from "@flaplab/physics";
import { describe, expect, it } from "vitest";
import { GameTable, courseOf } from "../src/index.js";
import { EASY_SEED, easyWorld, openWorld } from "./fixtures.js";
import { alice, codeOf, fakeClock } from "./table-helpers.js";

describe("GameTable.detach, adopt and release: a game moved to another process", () => {
  it("moves a started game with its state and input log; the new table plays it on exactly as the old would have", () => {
    // One clock for all three tables: the input log records arrival times.
    const clock = fakeClock();
    const home = new GameTable({ maxGamesPerPlayer: 2, sweepIntervalMs: 0, clock: clock.now });
    const away = new GameTable({ sweepIntervalMs: 0, clock: clock.now });
    const alone = new GameTable({ sweepIntervalMs: 0, clock: clock.now });
    for (const t of [home, alone]) {
      t.create({ id: "g", owner: alice, course: courseOf(easyWorld()), seed: EASY_SEED });
      t.input("g", "alice", { seq: 1, clientTimeMs: 5 });
      for (let i = 0; i < 30; i++) t.tick("g");
      t.input("g", "alice", { seq: 2, clientTimeMs: 6 });
    }
    // Through a structured clone, as a child process receives it.
    const snapshot = structuredClone(home.detach("g")!);
    expect(home.get("g")).toBeUndefined();
    expect(home.isDetached("g")).toBe(true);
    const moved = away.adopt(snapshot);
    expect(moved.inputs.toArray()).toEqual(alone.get("g")!.inputs.toArray());
    for (let i = 0; i < 100; i++) {
      away.tick("g");
      alone.tick("g");
    }
    expect(viewOf(moved.state)).toEqual(viewOf(alone.get("g")!.state));
    expect(moved.seed).toBe(EASY_SEED);
    expect(codeOf(() => away.adopt(snapshot))).toBe(Code.AlreadyExists);
  });

  it("keeps the detached id reserved and counted against its owner until released", () => {
    const home = new GameTable({ maxGamesPerPlayer: 1, sweepIntervalMs: 0 });
    home.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    home.input("g", "alice", { seq: 1, clientTimeMs: 0 });
    home.detach("g");
    expect(home.unfinishedCount("alice")).toBe(1);
    expect(codeOf(() => home.create({ id: "g", owner: alice, course: courseOf(openWorld()) }))).toBe(Code.AlreadyExists);
    expect(codeOf(() => home.create({ id: "h", owner: alice, course: courseOf(openWorld()) }))).toBe(Code.ResourceExhausted);
    expect(home.release("g")).toBe(true);
    expect(home.release("g")).toBe(false);
    expect(home.isDetached("g")).toBe(false);
    home.create({ id: "h", owner: alice, course: courseOf(openWorld()) });
    expect(home.detach("nope")).toBeUndefined();
  });

  it("releases a detached game whose end never came back after idleTtlMs", () => {
    const clock = fakeClock();
    const home = new GameTable({ clock: clock.now, idleTtlMs: 1000, sweepIntervalMs: 0 });
    home.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    home.detach("g");
    clock.advance(999);
    home.sweep();
    expect(home.isDetached("g")).toBe(true);
    clock.advance(2);
    expect(home.sweepByReason()).toMatchObject({ idle: 1 });
    expect(home.isDetached("g")).toBe(false);
    expect(home.unfinishedCount("alice")).toBe(0);
  });
});

describe("GameTable.adopt of a resumed game: the player's limit and the unplayed sweep", () => {
  /** A started game of `owner` as another engine's table detaches it. */
  function startedElsewhere(id: string, owner = alice) {
    const other = new GameTable({ sweepIntervalMs: 0 });
    other.create({ id, owner, course: courseOf(openWorld()) });
    other.input(id, owner.username, { seq: 1, clientTimeMs: 0 });
    for (let i = 0; i < 5; i++) other.tick(id);
    return structuredClone(other.detach(id)!);
  }

  it("counts it against the owner's unfinished games: it replaces the oldest game nobody plays, else ResourceExhausted", () => {
    const clock = fakeClock();
    const games = new GameTable({ maxGamesPerPlayer: 2, sweepIntervalMs: 0, clock: clock.now });
    games.adopt(startedElsewhere("r1"), { resumed: true });
    games.adopt(startedElsewhere("r2"), { resumed: true });
    // Neither is played on here: a third replaces the oldest.
    games.adopt(startedElsewhere("r3"), { resumed: true });
    expect([...games].map((g) => g.id)).toEqual(["r2", "r3"]);
    // Both are played on (an input, a tick): a fourth is refused, before and by adopt.
    games.input("r2", "alice", { seq: 2, clientTimeMs: 0 });
    games.tick("r3");
    games.sweep();
    expect(codeOf(() => games.requireRoomFor("alice"))).toBe(Code.ResourceExhausted);
    expect(codeOf(() => games.adopt(startedElsewhere("r4"), { resumed: true }))).toBe(Code.ResourceExhausted);
    expect(games.unfinishedCount("alice")).toBe(2);
    // Another player's game is not in alice's count; without `resumed` (a shard's game) the limit is the detaching table's.
    games.adopt(startedElsewhere("b1", { username: "bob", token: "b" }), { resumed: true });
    games.adopt(startedElsewhere("s1"));
    expect(games.unfinishedCount("alice")).toBe(3);
  });

  it("sweeps a resumed game nobody plays on after unplayedTtlMs, and keeps one that ticks", () => {
    const clock = fakeClock();
    const games = new GameTable({ unplayedTtlMs: 1000, sweepIntervalMs: 0, clock: clock.now });
    games.adopt(startedElsewhere("idle"), { resumed: true });
    games.adopt(startedElsewhere("ticking"), { resumed: true });
    clock.advance(500);
    games.tick("ticking");
    expect(games.sweep()).toBe(0);
    clock.advance(501);
    expect(games.sweepByReason()).toEqual({ finished: 0, unplayed: 1, idle: 0 });
    expect(games.has("idle")).toBe(false);
    expect(games.has("ticking")).toBe(true);
  });
});
