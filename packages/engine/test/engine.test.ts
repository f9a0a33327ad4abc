import { type MessageInitShape, create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, createHandlerContext, createContextValues } from "@connectrpc/connect";
import { principalKey } from "@flaplab/component";
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
import { GameTable, createEngine, engineComponent } from "../src/index.js";
import { deadlyWorld, openWorld } from "./fixtures.js";

function ctx(method: "startGame" | "handleInput", username?: string): HandlerContext {
  const contextValues = createContextValues();
  if (username !== undefined) {
    contextValues.set(principalKey, { username, token: `token-of-${username}`, expiresAt: new Date(Date.now() + 60_000) });
  }
  return createHandlerContext({
    service: EngineService,
    method: EngineService.method[method],
    protocolName: "test",
    requestMethod: "POST",
    url: `http://localhost/flaplab.engine.v1.EngineService/${method}`,
    contextValues,
  });
}

/** The error a call fails with, whether the handler throws or rejects. */
async function rejection(call: () => unknown): Promise<ConnectError> {
  try {
    await call();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

type Init<T extends Parameters<typeof create>[0]> = Omit<MessageInitShape<T>, "$typeName">;

function startReq(init: Init<typeof StartGameRequestSchema> = {}): StartGameRequest {
  return create(StartGameRequestSchema, { gameId: "g1", world: openWorld(), ...init });
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
    ["no viewport", { world: openWorld({ viewport: undefined }) }, /viewport is required/],
    ["no pipes", { world: openWorld({ pipes: [] }) }, /no pipes/],
    ["a zero-width viewport", { world: openWorld({ viewport: { width: 0, height: 640 } }) }, /viewport/],
    ["a huge spacing", { world: openWorld({ pipeSpacing: 5000 }) }, /no pipe fits/],
    ["a NaN gap", { world: openWorld({ pipes: [{ gapStart: Number.NaN, gapHeight: 1 }, ...openWorld().pipes] }) }, /pipe 0/],
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
    await engine.startGame(startReq({ world: deadlyWorld() }), ctx("startGame", "alice"));
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
