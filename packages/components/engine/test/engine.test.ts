import { type MessageInitShape, create } from "@bufbuild/protobuf";
import { Code, type HandlerContext } from "@connectrpc/connect";
import {
  EngineService,
  type HandleInputRequest,
  HandleInputRequestSchema,
  Key,
  PlayState,
  type StartGameRequest,
  StartGameRequestSchema,
} from "@flaplab/contracts/engine/v1/engine_pb";
import { describe, expect, it } from "vitest";
import { WorldSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { WORLD_LIMITS, generateWorld } from "@flaplab/worldgen";
import { GameTable, MAX_PIPES, checkWorld, createEngine, engineComponent } from "../src/index.js";
import { handlerContext, rejection } from "./fakes.js";
import { fairDeadlyWorld, fairWorld } from "./fixtures.js";

const ctx = (method: "startGame" | "handleInput", username?: string): HandlerContext => handlerContext(method, username);

type Init<T extends Parameters<typeof create>[0]> = Omit<MessageInitShape<T>, "$typeName">;

function startReq(init: Init<typeof StartGameRequestSchema> = {}): StartGameRequest {
  return create(StartGameRequestSchema, { gameId: "g1", world: fairWorld(), ...init });
}

function inputReq(init: Init<typeof HandleInputRequestSchema> = {}): HandleInputRequest {
  return create(HandleInputRequestSchema, { gameId: "g1", key: Key.SPACE, seq: 1, clientTimeMs: 1.5, ...init });
}

describe("engineComponent", () => {
  it("mounts EngineService with no public methods", () => {
    expect(engineComponent.name).toBe("engine");
    expect(engineComponent.service).toBe(EngineService);
    expect(engineComponent.publicMethods).toEqual([]);
  });
});

describe("StartGame", () => {
  it("creates a Ready game owned by the caller and reports the pipes in view", async () => {
    const games = new GameTable();
    const engine = createEngine({ games });
    const res = await engine.startGame(startReq({ bird: { width: 0, height: 0 } }), ctx("startGame", "alice"));
    expect(res.gameId).toBe("g1");
    expect(res.pipesInView).toBe(5);
    const g = games.get("g1");
    expect(g?.owner).toEqual({ username: "alice", token: "token-of-alice", expiresAt: expect.any(Date) });
    expect(g?.state.phase).toBe("ready");
    expect(g?.state.bird).toEqual({ width: 34, height: 24 });
    expect(g?.seed).toBe(1n);
  });

  it("needs a principal", async () => {
    const err = await rejection(() => createEngine().startGame(startReq(), ctx("startGame")));
    expect(err.code).toBe(Code.Unauthenticated);
  });

  it.each([
    ["an empty id", { gameId: "" }, /game id is required/],
    ["a 65-character id", { gameId: "g".repeat(65) }, /longer than 64/],
    ["no world", { world: undefined }, /world is required/],
    ["no viewport", { world: fairWorld({ viewport: undefined }) }, /viewport is required/],
    ["no pipes", { world: fairWorld({ pipes: [] }) }, /no pipes/],
    ["a zero-width viewport", { world: fairWorld({ viewport: { width: 0, height: 640 } }) }, /viewport/],
    ["a huge spacing", { world: fairWorld({ pipeSpacing: 5000 }) }, /pipe spacing must be from 0 to 240 px/],
    ["a NaN gap", { world: fairWorld({ pipes: [{ gapStart: Number.NaN, gapHeight: 1 }, ...fairWorld().pipes.slice(1)] }) }, /pipe 0/],
    ["a negative bird", { bird: { width: -1, height: 24 } }, /bird/],
  ])("rejects %s with InvalidArgument", async (_what, init, message) => {
    const err = await rejection(() => createEngine().startGame(startReq(init), ctx("startGame", "alice")));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(message);
  });

  it("rejects a duplicate id with AlreadyExists and a full table with ResourceExhausted", async () => {
    const engine = createEngine({ maxGames: 2 });
    await engine.startGame(startReq({ gameId: "a" }), ctx("startGame", "alice"));
    expect((await rejection(() => engine.startGame(startReq({ gameId: "a" }), ctx("startGame", "bob")))).code).toBe(Code.AlreadyExists);
    await engine.startGame(startReq({ gameId: "b" }), ctx("startGame", "alice"));
    expect((await rejection(() => engine.startGame(startReq({ gameId: "c" }), ctx("startGame", "alice")))).code).toBe(
      Code.ResourceExhausted,
    );
  });
});

describe("StartGame accepts only worlds the world generator could make", () => {
  const pipes = (n: number, gap = { gapStart: 0, gapHeight: 640 }) => Array.from({ length: n }, () => gap);
  const withPipe0 = (gap: { gapStart: number; gapHeight: number }) => fairWorld({ pipes: [gap, ...pipes(99)] });

  it.each([
    ["10,000 pipes", fairWorld({ pipes: pipes(10_000) }), /world has 10000 pipes, more than 100/],
    ["101 pipes", fairWorld({ pipes: pipes(101) }), /world has 101 pipes, more than 100/],
    ["gaps 2e9 px tall", fairWorld({ pipes: pipes(100, { gapStart: -1e9, gapHeight: 2e9 }) }), /pipe 0 has a gap outside the 640 px viewport/],
    ["a gap taller than the viewport", withPipe0({ gapStart: 0, gapHeight: 641 }), /pipe 0 has a gap outside/],
    ["a gap ending below the viewport", withPipe0({ gapStart: 600, gapHeight: 41 }), /pipe 0 has a gap outside/],
    ["a negative gap start", withPipe0({ gapStart: -1, gapHeight: 10 }), /pipe 0 has a gap outside/],
    ["a negative gap height", withPipe0({ gapStart: 10, gapHeight: -5 }), /pipe 0 has a gap outside/],
    ["an infinite gap", withPipe0({ gapStart: 0, gapHeight: Number.POSITIVE_INFINITY }), /pipe 0 has a gap outside/],
    ["a NaN gap start", withPipe0({ gapStart: Number.NaN, gapHeight: 10 }), /pipe 0 has a gap outside/],
    ["a spacing over half the viewport width", fairWorld({ pipeSpacing: 241 }), /pipe spacing must be from 0 to 240 px/],
    ["a negative spacing", fairWorld({ pipeSpacing: -1 }), /pipe spacing/],
    ["a NaN spacing", fairWorld({ pipeSpacing: Number.NaN }), /pipe spacing/],
    ["an infinite spacing", fairWorld({ pipeSpacing: Number.POSITIVE_INFINITY }), /pipe spacing/],
    ["a viewport wider than the generator's", fairWorld({ viewport: { width: 20_000, height: 640 } }), /viewport width must be a whole number from 4 to 10000/],
    ["a fractional viewport", fairWorld({ viewport: { width: 480.5, height: 640 } }), /viewport width/],
    ["a viewport too short", fairWorld({ viewport: { width: 480, height: 10 } }), /viewport height must be a whole number from 19/],
  ])("refuses %s with InvalidArgument and a clear message", async (_what, world, message) => {
    const games = new GameTable({ sweepIntervalMs: 0 });
    const err = await rejection(() => createEngine({ games }).startGame(startReq({ world }), ctx("startGame", "alice")));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(message);
    expect(games.size).toBe(0);
  });

  it("refuses a bird as large as the viewport", async () => {
    const err = await rejection(() =>
      createEngine().startGame(startReq({ bird: { width: 480, height: 24 } }), ctx("startGame", "alice")),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toMatch(/bird 480x24 must be smaller than the 480x640 viewport/);
  });

  it("takes its bounds from the world generator", () => {
    expect(MAX_PIPES).toBe(WORLD_LIMITS.maxPipes);
    expect(MAX_PIPES).toBe(100);
  });

  it("accepts every world the generator makes, at its smallest, usual and largest viewports", () => {
    const viewports = [
      { width: 480, height: 640 },
      { width: WORLD_LIMITS.minViewportWidth * 20, height: WORLD_LIMITS.minViewportHeight },
      { width: WORLD_LIMITS.maxViewportSize, height: WORLD_LIMITS.maxViewportSize },
      { width: 4096, height: 64 },
    ];
    for (const viewport of viewports) {
      for (let seed = 1n; seed <= 200n; seed++) {
        const spec = generateWorld(seed * 7919n, viewport);
        const world = create(WorldSchema, { seed: spec.seed, viewport: spec.viewport, pipeSpacing: spec.pipeSpacing, pipes: spec.pipes });
        expect(checkWorld(world, { width: 34, height: 12 }), `seed ${seed * 7919n} in ${viewport.width}x${viewport.height}`).toBeUndefined();
      }
    }
  });
});

describe("StartGame per player", () => {
  it("keeps a flooding player to a few games without touching another player's", async () => {
    const games = new GameTable({ maxGames: 10, maxGamesPerPlayer: 3, sweepIntervalMs: 0 });
    const engine = createEngine({ games });
    await engine.startGame(startReq({ gameId: "bob-1" }), ctx("startGame", "bob"));
    for (let i = 0; i < 50; i++) {
      await engine.startGame(startReq({ gameId: `m-${i}` }), ctx("startGame", "mallory"));
    }
    // Each new unstarted game replaced mallory's oldest: she holds her 3 newest, bob his own.
    expect([...games].map((g) => g.id).sort()).toEqual(["bob-1", "m-47", "m-48", "m-49"]);
    await engine.startGame(startReq({ gameId: "bob-2" }), ctx("startGame", "bob"));
    expect(games.unfinishedCount("bob")).toBe(2);
  });

  it("answers ResourceExhausted when all of a player's games have started", async () => {
    const games = new GameTable({ maxGamesPerPlayer: 3, sweepIntervalMs: 0 });
    const engine = createEngine({ games });
    for (const id of ["a", "b", "c"]) {
      await engine.startGame(startReq({ gameId: id }), ctx("startGame", "mallory"));
      await engine.handleInput(inputReq({ gameId: id }), ctx("handleInput", "mallory"));
    }
    const err = await rejection(() => engine.startGame(startReq({ gameId: "d" }), ctx("startGame", "mallory")));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe("player mallory already has 3 games in progress (at most 3); finish one first");
    expect(games.has("d")).toBe(false);
    expect((await engine.startGame(startReq({ gameId: "e" }), ctx("startGame", "alice"))).gameId).toBe("e");
  });
});

describe("HandleInput", () => {
  it("starts, then flaps at the next tick; the table's tick drives the game", async () => {
    const games = new GameTable();
    const engine = createEngine({ games });
    await engine.startGame(startReq(), ctx("startGame", "alice"));
    expect(await engine.handleInput(inputReq({ seq: 1 }), ctx("handleInput", "alice"))).toMatchObject({
      tick: 1,
      state: PlayState.PLAYING,
    });
    for (let i = 0; i < 10; i++) games.tick("g1");
    const res = await engine.handleInput(inputReq({ seq: 2, clientTimeMs: 99 }), ctx("handleInput", "alice"));
    expect(res.tick).toBe(11);
    expect(res.state).toBe(PlayState.PLAYING);
    expect(games.get("g1")?.inputs.at(-1)).toMatchObject({ seq: 2, clientTimeMs: 99, tick: 11, effect: "flap" });
    games.tick("g1");
    expect(games.get("g1")?.state.birdVelocity).toBe(-4.35);
    expect(games.get("g1")?.reflectedSeq).toBe(2);
  });

  it("answers FailedPrecondition once the game is over", async () => {
    const games = new GameTable();
    const engine = createEngine({ games });
    await engine.startGame(startReq({ world: fairDeadlyWorld() }), ctx("startGame", "alice"));
    await engine.handleInput(inputReq(), ctx("handleInput", "alice"));
    while (games.get("g1")?.state.phase === "playing") games.tick("g1");
    const err = await rejection(() => engine.handleInput(inputReq({ seq: 2 }), ctx("handleInput", "alice")));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toMatch(/is over/);
  });

  it("checks key, id, owner and principal", async () => {
    const engine = createEngine();
    await engine.startGame(startReq(), ctx("startGame", "alice"));
    const cases: [HandleInputRequest, string | undefined, Code][] = [
      [inputReq({ key: Key.UNSPECIFIED }), "alice", Code.InvalidArgument],
      [inputReq({ gameId: "" }), "alice", Code.InvalidArgument],
      [inputReq({ gameId: "missing" }), "alice", Code.NotFound],
      [inputReq(), "bob", Code.PermissionDenied],
      [inputReq(), undefined, Code.Unauthenticated],
    ];
    for (const [req, user, code] of cases) {
      expect((await rejection(() => engine.handleInput(req, ctx("handleInput", user)))).code).toBe(code);
    }
    // None of them touched the game.
    expect(await engine.handleInput(inputReq(), ctx("handleInput", "alice"))).toMatchObject({ tick: 1, state: PlayState.PLAYING });
  });
});
