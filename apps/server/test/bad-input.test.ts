import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { EngineService, HandleInputRequestSchema, Key } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { createSigner, loadOrCreateKeys, openLocalIdentity } from "@flaplab/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMonolith, type Monolith } from "./attacks/credentials-harness.js";

// A real monolith server on a loopback port, attacked with bad input; it must keep serving.
let m: Monolith;
let baseUrl: string;
let token: string;
/** The engine's component credential acting for "tester", as internal methods need. */
let engineToken: string;
/** The engine's credential for the score component (RecordRun). */
let engineToScore: string;

beforeAll(async () => {
  m = await startMonolith();
  baseUrl = m.baseUrl;
  token = await m.register("tester");
  const components = (await openLocalIdentity(m.dir)).serviceSigner;
  engineToken = await components.tokenFor("engine", "engine", "tester");
  engineToScore = await components.tokenFor("engine", "score", "tester");
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

function initiator(headers: Record<string, string> = {}) {
  const transport = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    interceptors: [(next) => (req) => { for (const [k, v] of Object.entries(headers)) req.header.set(k, v); return next(req); }],
  });
  return createClient(InitiatorService, transport);
}

async function codeOf(p: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

async function stillServing(): Promise<void> {
  const health = await fetch(`${baseUrl}/healthz`);
  expect(health.status).toBe(200);
  const res = await initiator({ authorization: `Bearer ${token}` }).startGame({});
  expect(res.gameId).not.toBe("");
}

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");

describe("bad tokens get Unauthenticated and the server keeps serving", () => {
  it("accepts the valid token", async () => {
    expect(await codeOf(initiator({ authorization: `Bearer ${token}` }).startGame({}))).toBe("ok");
  });

  it("missing token", async () => {
    expect(await codeOf(initiator().startGame({}))).toBe(Code.Unauthenticated);
  });

  it("expired token", async () => {
    const keys = await loadOrCreateKeys(m.dir);
    const past = Date.now() - 2 * 3600_000;
    const expired = await createSigner({ privateKey: keys.privateKey, ttlSeconds: 60, now: () => past }).sign("tester");
    expect(await codeOf(initiator({ authorization: `Bearer ${expired.token}` }).startGame({}))).toBe(Code.Unauthenticated);
  });

  it("tampered token", async () => {
    const [h, p, s] = token.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString()) as Record<string, unknown>;
    const forged = `${h}.${b64({ ...claims, exp: Number(claims["exp"]) + 86400 })}.${s}`;
    expect(await codeOf(initiator({ authorization: `Bearer ${forged}` }).startGame({}))).toBe(Code.Unauthenticated);
  });

  it("unsigned token (alg: none)", async () => {
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as object;
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
    expect(await codeOf(initiator({ authorization: `Bearer ${none}` }).startGame({}))).toBe(Code.Unauthenticated);
  });

  it("garbage in the header", async () => {
    expect(await codeOf(initiator({ authorization: "Bearer not.a.jwt" }).startGame({}))).toBe(Code.Unauthenticated);
    expect(await codeOf(initiator({ authorization: "Basic dXNlcjpwYXNz" }).startGame({}))).toBe(Code.Unauthenticated);
    await stillServing();
  });
});

describe("bad messages get clear Connect errors and the server keeps serving", () => {
  const route = "/flaplab.initiator.v1.InitiatorService/StartGame";

  it("malformed protobuf body → invalid_argument", async () => {
    const res = await fetch(baseUrl + route, {
      method: "POST",
      headers: { "content-type": "application/proto", authorization: `Bearer ${token}` },
      body: new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
    await stillServing();
  });

  it("malformed protobuf body over gRPC → invalid_argument", async () => {
    const frame = new Uint8Array([0, 0, 0, 0, 3, 0x0a, 0xff, 0xff]);
    const res = await fetch(baseUrl + route, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", authorization: `Bearer ${token}` },
      body: frame,
    });
    // Refused before any message: a trailers-only answer, the status in its headers.
    expect(res.status).toBe(200);
    expect(res.headers.get("grpc-status")).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(res.headers.get("grpc-message") ?? "")).toMatch(/^parse binary: /);
    await stillServing();
  });

  it("malformed JSON body → invalid_argument", async () => {
    const res = await fetch(baseUrl + route, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: "{ this is not json",
    });
    expect(((await res.json()) as { code: string }).code).toBe("invalid_argument");
  });

  it("oversized request → resource_exhausted", async () => {
    const big = toBinary(HandleInputRequestSchema, create(HandleInputRequestSchema, { gameId: "x".repeat(2 * 1024 * 1024) }));
    const res = await fetch(`${baseUrl}/flaplab.engine.v1.EngineService/HandleInput`, {
      method: "POST",
      headers: { "content-type": "application/proto", authorization: `Bearer ${token}` },
      body: big,
    });
    expect(((await res.json()) as { code: string }).code).toBe("resource_exhausted");
    await stillServing();
  });

  it("oversized request over gRPC (h2c) → resource_exhausted", async () => {
    const engine = createClient(EngineService, createGrpcTransport({ baseUrl }));
    const code = await codeOf(
      engine.handleInput({ gameId: "y".repeat(2 * 1024 * 1024) }, { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(code).toBe(Code.ResourceExhausted);
  });

  it("unknown game id → not_found", async () => {
    const engine = createClient(EngineService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const code = await codeOf(
      engine.handleInput({ gameId: "no-such-game", key: Key.SPACE, seq: 1 }, { headers: { authorization: `Bearer ${engineToken}` } }),
    );
    expect(code).toBe(Code.NotFound);
    await stillServing();
  });

  it("recording a run for a finished game twice keeps the first (already_exists), nothing lost", async () => {
    const score = createClient(ScoreService, createConnectTransport({ baseUrl, httpVersion: "2" }));
    const headers = { authorization: `Bearer ${engineToScore}` };
    await score.recordRun({ gameId: "g-dup", score: 7, ticks: 402, seed: 1n }, { headers });
    expect(await codeOf(score.recordRun({ gameId: "g-dup", score: 99, ticks: 1, seed: 1n }, { headers }))).toBe(
      Code.AlreadyExists,
    );
    // The player reads their runs with their own token (no component calls GetScores).
    const { ownRuns } = await score.getScores({}, { headers: { authorization: `Bearer ${token}` } });
    expect(ownRuns.find((r) => r.gameId === "g-dup")?.score).toBe(7);
  });
});
