import { Code } from "@connectrpc/connect";
import { viewOf } from "@flaplab/physics";
import { describe, expect, it, vi } from "vitest";
import { GameTable, courseOf } from "../src/index.js";
import { EASY_FLAP_TICKS, EASY_SEED, deadlyWorld, easyWorld, openWorld } from "./fixtures.js";
import { alice, codeOf, fakeClock } from "./table-helpers.js";

describe("GameTable.create", () => {
  it("creates a game in Ready owned by its creator", () => {
    const clock = fakeClock();
    const games = new GameTable({ clock: clock.now });
    const g = games.create({ id: "g1", owner: alice, course: courseOf(openWorld()), seed: 7n });
    expect(games.get("g1")).toBe(g);
    expect(games.size).toBe(1);
    expect(g.state.phase).toBe("ready");
    expect(g.state.pipesInView).toBe(5);
    expect(g.owner).toEqual(alice);
    expect(g.seed).toBe(7n);
    expect(g.createdAtMs).toBe(clock.now());
    expect(g.state.bird).toEqual({ width: 34, height: 24 });
  });

  it("fills an unset bird dimension with the default", () => {
    const games = new GameTable();
    const course = courseOf(openWorld());
    expect(games.create({ id: "a", owner: alice, course, bird: { width: 0, height: 0 } }).state.bird).toEqual({ width: 34, height: 24 });
    expect(games.create({ id: "b", owner: alice, course, bird: { width: 40, height: 0 } }).state.bird).toEqual({ width: 40, height: 24 });
    expect(codeOf(() => games.create({ id: "c", owner: alice, course, bird: { width: -3, height: 10 } }))).toBe(Code.InvalidArgument);
  });

  it("rejects bad ids, bad courses and duplicates", () => {
    const games = new GameTable();
    const course = courseOf(openWorld());
    expect(codeOf(() => games.create({ id: "", owner: alice, course }))).toBe(Code.InvalidArgument);
    expect(codeOf(() => games.create({ id: "x".repeat(65), owner: alice, course }))).toBe(Code.InvalidArgument);
    expect(codeOf(() => games.create({ id: "has space", owner: alice, course }))).toBe(Code.InvalidArgument);
    expect(games.create({ id: "x".repeat(64), owner: alice, course }).id).toHaveLength(64);
    expect(codeOf(() => games.create({ id: "short", owner: alice, course: { ...course, pipes: course.pipes.slice(0, 3) } }))).toBe(
      Code.InvalidArgument,
    );
    games.create({ id: "dup", owner: alice, course });
    expect(codeOf(() => games.create({ id: "dup", owner: { username: "bob", token: "t" }, course }))).toBe(Code.AlreadyExists);
    expect(games.get("dup")?.owner.username).toBe("alice");
  });
});

describe("GameTable.input and tick", () => {
  it("the first press starts the game without a flap; ticks reflect the latest seq", () => {
    const clock = fakeClock();
    const games = new GameTable({ clock: clock.now });
    games.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    expect(games.tick("g")?.ticked).toBe(false); // Ready: no tick
    expect(games.get("g")?.state.tick).toBe(0);

    clock.advance(5);
    expect(games.input("g", "alice", { seq: 1, clientTimeMs: 12.5 })).toEqual({ tick: 1, phase: "playing", effect: "started" });
    const g = games.get("g")!;
    expect(g.startedAtMs).toBe(clock.now());
    expect(g.reflectedSeq).toBe(0);
    expect(games.tick("g")?.ticked).toBe(true);
    expect(g.reflectedSeq).toBe(1);
    expect(g.state.birdVelocity).toBe(0.25); // no flap

    expect(games.input("g", "alice", { seq: 2, clientTimeMs: 40 })).toEqual({ tick: 2, phase: "playing", effect: "flap" });
    expect(games.input("g", "alice", { seq: 3, clientTimeMs: 41 }).tick).toBe(2);
    expect(g.reflectedSeq).toBe(1);
    games.tick("g");
    expect(g.state.birdVelocity).toBe(-4.6 + 0.25); // two presses, one flap
    expect(g.reflectedSeq).toBe(3);
    expect(g.inputs.toArray().map((i) => [i.seq, i.tick, i.effect])).toEqual([
      [1, 1, "started"],
      [2, 2, "flap"],
      [3, 2, "flap"],
    ]);
    expect(g.inputs.at(0)?.clientTimeMs).toBe(12.5);
  });

  it("checks the game and its owner", () => {
    const games = new GameTable();
    games.create({ id: "g", owner: alice, course: courseOf(deadlyWorld()) });
    expect(codeOf(() => games.input("nope", "alice", { seq: 1, clientTimeMs: 0 }))).toBe(Code.NotFound);
    expect(codeOf(() => games.input("g", "bob", { seq: 1, clientTimeMs: 0 }))).toBe(Code.PermissionDenied);
    expect(games.get("g")?.state.phase).toBe("ready");
    games.input("g", "alice", { seq: 1, clientTimeMs: 0 });
    let ticks = 0;
    while (games.get("g")?.state.phase === "playing") {
      games.tick("g");
      ticks++;
    }
    expect(games.get("g")?.state.died).toBe(true);
    expect(games.get("g")?.finishedAtMs).toBeDefined();
    expect(games.get("g")?.state.tick).toBe(ticks);
    expect(codeOf(() => games.input("g", "alice", { seq: 2, clientTimeMs: 0 }))).toBe(Code.FailedPrecondition);
    expect(games.tick("g")?.ticked).toBe(false);
    expect(games.tick("nope")).toBeUndefined();
  });

  it("plays the easy world to tick 402 and score 7 through the table", () => {
    const games = new GameTable();
    const g = games.create({ id: "easy", owner: alice, course: courseOf(easyWorld()), seed: EASY_SEED });
    let seq = 0;
    games.input("easy", "alice", { seq: ++seq, clientTimeMs: 0 });
    const flaps = new Set(EASY_FLAP_TICKS);
    let points = 0;
    while (g.state.phase === "playing") {
      if (flaps.has(g.state.tick + 1)) games.input("easy", "alice", { seq: ++seq, clientTimeMs: 0 });
      if (games.tick("easy")?.scored) points++;
    }
    expect({ tick: g.state.tick, score: g.state.score, points }).toEqual({ tick: 402, score: 7, points: 7 });
    expect(g.reflectedSeq).toBe(EASY_FLAP_TICKS.length + 1);
    expect(viewOf(g.state).gameOver).toBe(true);
  });

  it("keeps a bounded input log", () => {
    const games = new GameTable({ maxInputLog: 3 });
    games.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    for (let seq = 1; seq <= 5; seq++) games.input("g", "alice", { seq, clientTimeMs: seq });
    expect(games.get("g")?.inputs.toArray().map((i) => i.seq)).toEqual([3, 4, 5]);
    expect(games.get("g")?.lastInputSeq).toBe(5);
  });

  it("does not move the reflected seq backwards for a late, older input", () => {
    const games = new GameTable();
    const g = games.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    games.input("g", "alice", { seq: 5, clientTimeMs: 0 });
    games.input("g", "alice", { seq: 4, clientTimeMs: 0 });
    games.tick("g");
    expect(g.reflectedSeq).toBe(5);
  });
});

describe("GameTable.tickGame", () => {
  it("ticks a game object while this table holds it, as tick(id) does, and refuses it once it left", () => {
    const table = new GameTable();
    const other = new GameTable();
    const g = table.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    table.input("g", "alice", { seq: 1, clientTimeMs: 0 });
    expect(table.tickGame(g)).toMatchObject({ ticked: true });
    expect(table.tick("g")).toMatchObject({ ticked: true });
    expect(g.state.tick).toBe(2);
    // Another table's game, a deleted game, and a game whose id now names another game.
    expect(other.tickGame(g)).toBeUndefined();
    table.delete("g");
    expect(table.tickGame(g)).toBeUndefined();
    const again = table.create({ id: "g", owner: alice, course: courseOf(openWorld()) });
    table.input("g", "alice", { seq: 1, clientTimeMs: 0 });
    expect(table.tickGame(g)).toBeUndefined();
    expect(g.state.tick).toBe(2);
    expect(table.tickGame(again)).toMatchObject({ ticked: true });
    // Detached to another process, then adopted by a table: that table's to tick.
    const detached = table.detach("g")!;
    expect(table.tickGame(again)).toBeUndefined();
    const adopted = other.adopt(structuredClone(detached));
    expect(other.tickGame(adopted)).toMatchObject({ ticked: true });
    expect(adopted.state.tick).toBe(2);
  });
});

describe("GameTable capacity and sweeping", () => {
  it("is bounded, and frees finished games after their time to live", () => {
    const clock = fakeClock();
    const games = new GameTable({ maxGames: 2, clock: clock.now, finishedTtlMs: 1000, idleTtlMs: 60_000 });
    const course = courseOf(deadlyWorld());
    games.create({ id: "a", owner: alice, course });
    games.create({ id: "b", owner: alice, course });
    expect(codeOf(() => games.create({ id: "c", owner: alice, course }))).toBe(Code.ResourceExhausted);

    games.input("a", "alice", { seq: 1, clientTimeMs: 0 });
    while (games.get("a")?.state.phase === "playing") games.tick("a");
    clock.advance(999);
    expect(codeOf(() => games.create({ id: "c", owner: alice, course }))).toBe(Code.ResourceExhausted);
    clock.advance(1);
    expect(games.create({ id: "c", owner: alice, course }).id).toBe("c");
    expect(games.has("a")).toBe(false);
    expect([...games].map((g) => g.id)).toEqual(["b", "c"]);
  });

  it("sweeps unfinished games left idle", () => {
    const clock = fakeClock();
    const games = new GameTable({ clock: clock.now, idleTtlMs: 5000 });
    const course = courseOf(openWorld());
    games.create({ id: "idle", owner: alice, course });
    games.create({ id: "busy", owner: alice, course });
    clock.advance(4000);
    games.input("busy", "alice", { seq: 1, clientTimeMs: 0 });
    clock.advance(1000);
    expect(games.sweep()).toBe(1);
    expect(games.has("idle")).toBe(false);
    expect(games.has("busy")).toBe(true);
    expect(games.delete("busy")).toBe(true);
    expect(games.size).toBe(0);
  });

  it("keeps a game that ticks without input, and sweeps it idleTtlMs after the sweep that saw its last tick", () => {
    const clock = fakeClock();
    const games = new GameTable({ clock: clock.now, idleTtlMs: 5000, sweepIntervalMs: 0 });
    const game = games.create({ id: "ticking", owner: alice, course: courseOf(openWorld()) });
    games.input("ticking", "alice", { seq: 1, clientTimeMs: 0 });
    // 20 s of ticks and sweeps with no input: never idle.
    for (let s = 0; s < 20; s++) {
      for (let t = 0; t < 30; t++) expect(games.tickGame(game)).toMatchObject({ ticked: true });
      clock.advance(1000);
      expect(games.sweep()).toBe(0);
    }
    expect(game.lastActivityMs).toBe(clock.now());
    // The ticks stop (its stream went away without the game being removed): idle from that sweep.
    clock.advance(4999);
    expect(games.sweep()).toBe(0);
    clock.advance(1);
    expect(games.sweepByReason()).toMatchObject({ idle: 1 });
    expect(games.has("ticking")).toBe(false);
  });
});

describe("GameTable per-player limit", () => {
  const bob = { username: "bob", token: "token-b" };

  it("replaces a player's oldest unstarted game at the limit, and refuses when all have started", () => {
    const games = new GameTable({ maxGamesPerPlayer: 3, sweepIntervalMs: 0 });
    const course = courseOf(openWorld());
    for (const id of ["a", "b", "c"]) games.create({ id, owner: alice, course });
    games.input("b", "alice", { seq: 1, clientTimeMs: 0 });
    games.create({ id: "d", owner: alice, course });
    expect([...games].map((g) => g.id)).toEqual(["b", "c", "d"]);
    games.create({ id: "e", owner: alice, course });
    expect([...games].map((g) => g.id)).toEqual(["b", "d", "e"]);
    games.input("d", "alice", { seq: 1, clientTimeMs: 0 });
    games.input("e", "alice", { seq: 1, clientTimeMs: 0 });
    expect(codeOf(() => games.create({ id: "f", owner: alice, course }))).toBe(Code.ResourceExhausted);
    expect(games.has("f")).toBe(false);
    // Other players are not limited by alice's games.
    expect(games.create({ id: "bob", owner: bob, course }).id).toBe("bob");
    expect(games.unfinishedCount("alice")).toBe(3);
    expect(games.unfinishedCount("bob")).toBe(1);
  });

  it("counts only unfinished games: a finished or deleted game frees a slot", () => {
    const games = new GameTable({ maxGamesPerPlayer: 2, sweepIntervalMs: 0 });
    const deadly = courseOf(deadlyWorld());
    for (const id of ["a", "b"]) {
      games.create({ id, owner: alice, course: deadly });
      games.input(id, "alice", { seq: 1, clientTimeMs: 0 });
    }
    expect(codeOf(() => games.create({ id: "c", owner: alice, course: deadly }))).toBe(Code.ResourceExhausted);
    while (games.get("a")?.state.phase === "playing") games.tick("a");
    expect(games.get("a")?.state.phase).toBe("over");
    expect(games.create({ id: "c", owner: alice, course: deadly }).id).toBe("c");
    games.input("c", "alice", { seq: 1, clientTimeMs: 0 });
    expect(codeOf(() => games.create({ id: "d", owner: alice, course: deadly }))).toBe(Code.ResourceExhausted);
    games.delete("b");
    expect(games.create({ id: "d", owner: alice, course: deadly }).id).toBe("d");
    expect(games.unfinishedCount("alice")).toBe(2);
  });

  it("keeps the global cap across players", () => {
    const games = new GameTable({ maxGames: 5, maxGamesPerPlayer: 3, sweepIntervalMs: 0 });
    const course = courseOf(openWorld());
    for (let i = 0; i < 5; i++) games.create({ id: `p${i}`, owner: { username: `player${i}`, token: "t" }, course });
    expect(codeOf(() => games.create({ id: "late", owner: bob, course }))).toBe(Code.ResourceExhausted);
    expect(games.size).toBe(5);
  });

  it("logs refusals, the first at once and then at most one line per 5 s", () => {
    const clock = fakeClock();
    const warn = vi.fn();
    const games = new GameTable({ maxGames: 1, clock: clock.now, sweepIntervalMs: 0, logger: { info: vi.fn(), warn } });
    games.create({ id: "a", owner: alice, course: courseOf(openWorld()) });
    for (let i = 0; i < 10; i++) codeOf(() => games.create({ id: `b${i}`, owner: bob, course: courseOf(openWorld()) }));
    expect(warn).toHaveBeenCalledTimes(1);
    clock.advance(5000);
    codeOf(() => games.create({ id: "c", owner: bob, course: courseOf(openWorld()) }));
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn.mock.calls[1]![0]).toMatchObject({ event: "game-refused", reason: "table-full", alsoRefused: 9 });
  });
});
