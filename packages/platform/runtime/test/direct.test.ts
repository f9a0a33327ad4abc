import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, createContextValues, type HandlerContext } from "@connectrpc/connect";
import { defineComponent, principalKey } from "@flaplab/component";
import { WorldGenService, WorldSchema, type GenerateWorldRequest } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CALLER_HEADER, createRuntime, DEFAULT_CALL_TIMEOUT_MS, parseTopology, type CallRecord, type Runtime } from "../src/index.js";

// A world generator stand-in whose handler each test sets, called in direct mode.
const worldgen = defineComponent({ name: "worldgen", service: WorldGenService, internalMethods: ["GenerateWorld"] });
const all = ["auth", "worldgen", "engine", "initiator", "music", "score"];
const headers = { authorization: "Bearer t0k3n" };
const world = create(WorldSchema, { seed: 1n });

type Handler = (req: GenerateWorldRequest, ctx: HandlerContext) => Promise<void> | void;

let handle: Handler = () => {};
let runtime: Runtime;
let records: CallRecord[];

beforeEach(() => {
  records = [];
  runtime = createRuntime({
    topology: parseTopology({ name: "t", groups: { one: { components: all, address: "127.0.0.1:9000" } } }),
    group: "one",
    // Every token passes as the initiator's credential acting for alice (GenerateWorld is internal).
    verifier: {
      verify: (token) => Promise.resolve({ username: "alice", token, expiresAt: new Date(Date.now() + 60_000), service: "initiator", callee: "worldgen" }),
    },
    callLog: (r) => records.push(r),
  });
  runtime.mount(worldgen, {
    async generateWorld(req, ctx) {
      await handle(req, ctx);
      return { world };
    },
  });
});

afterEach(() => {
  handle = () => {};
  runtime.close();
});

function client() {
  return runtime.client(worldgen, "test");
}

/** Resolves with the reason once `signal` is aborted. */
function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));
}

describe("direct calls: the handler context", () => {
  it("describes the call and carries the request headers", async () => {
    let seen: HandlerContext | undefined;
    handle = (_req, ctx) => {
      seen = ctx;
    };
    await client().generateWorld({ gameId: "g-1" }, { headers: { ...headers, "x-extra": "1" } });
    expect(seen).toMatchObject({ protocolName: "direct", requestMethod: "POST", url: "direct:/flaplab.worldgen.v1.WorldGenService/GenerateWorld" });
    expect(seen!.method).toBe(WorldGenService.method.generateWorld);
    expect(seen!.service).toBe(WorldGenService);
    expect(seen!.requestHeader.get("x-extra")).toBe("1");
    expect(seen!.requestHeader.get(CALLER_HEADER)).toBe("test.-");
    // A call that sets no deadline gets the runtime's default one.
    expect(seen!.timeoutMs()).toBeGreaterThan(DEFAULT_CALL_TIMEOUT_MS - 1000);
    expect(seen!.timeoutMs()).toBeLessThanOrEqual(DEFAULT_CALL_TIMEOUT_MS);
  });

  it("aborts ctx.signal with the caller's reason when the caller aborts mid-call", async () => {
    const caller = new AbortController();
    let reason: unknown;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    handle = async (_req, ctx) => {
      expect(ctx.signal.aborted).toBe(false);
      started();
      reason = await aborted(ctx.signal);
    };
    const call = client().generateWorld({}, { headers, signal: caller.signal });
    await running;
    caller.abort(new Error("player left"));
    await expect(call).resolves.toMatchObject({ world: { seed: 1n } });
    expect(reason).toEqual(new Error("player left"));
  });

  it("gives an aborted ctx.signal when the caller's signal is already aborted", async () => {
    let reason: unknown;
    handle = (_req, ctx) => {
      reason = ctx.signal.aborted ? ctx.signal.reason : undefined;
    };
    await client().generateWorld({}, { headers, signal: AbortSignal.abort("gone") });
    expect(reason).toBe("gone");
  });

  it("aborts ctx.signal at the deadline with DeadlineExceeded, and reports it", async () => {
    let remaining: number | undefined;
    handle = async (_req, ctx) => {
      remaining = ctx.timeoutMs();
      throw await aborted(ctx.signal);
    };
    const err = await client().generateWorld({ gameId: "g-2" }, { headers, timeoutMs: 30 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.DeadlineExceeded);
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(30);
    expect(records.filter((r) => r.side === "client")).toMatchObject([{ gameId: "g-2", mode: "direct", code: "deadline_exceeded" }]);
  });

  it("gives an aborted ctx.signal when the deadline has already passed", async () => {
    let reason: unknown;
    handle = (_req, ctx) => {
      reason = ctx.signal.reason;
    };
    await client().generateWorld({}, { headers, timeoutMs: 0 });
    expect(ConnectError.from(reason).code).toBe(Code.DeadlineExceeded);
  });

  it("aborts ctx.signal once the call is over, whether it was read during the call or after", async () => {
    let duringCall: AbortSignal | undefined;
    let kept: HandlerContext | undefined;
    handle = (_req, ctx) => {
      duringCall = ctx.signal;
    };
    await client().generateWorld({}, { headers, timeoutMs: 60_000 });
    expect(duringCall?.aborted).toBe(true);

    handle = (_req, ctx) => {
      kept = ctx;
    };
    await client().generateWorld({}, { headers });
    expect(kept?.signal.aborted).toBe(true);
  });

  it("passes the response headers and trailers the handler sets back to the caller", async () => {
    handle = (_req, ctx) => {
      ctx.responseHeader.set("x-world", "easy");
      ctx.responseTrailer.set("x-pipes", "100");
    };
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    await client().generateWorld({}, { headers, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
    expect(header?.get("x-world")).toBe("easy");
    expect(trailer?.get("x-pipes")).toBe("100");
  });

  it("hands the caller's context values to the handler, next to the principal", async () => {
    const difficulty = createContextKey("normal");
    let seen: [string, string | undefined] | undefined;
    handle = (_req, ctx) => {
      seen = [ctx.values.get(difficulty), ctx.values.get(principalKey)?.username];
    };
    await client().generateWorld({}, { headers, contextValues: createContextValues().set(difficulty, "hard") });
    expect(seen).toEqual(["hard", "alice"]);
    await client().generateWorld({}, { headers });
    expect(seen).toEqual(["normal", "alice"]);
  });
});
