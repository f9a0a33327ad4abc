// Every RPC method of every component, in every protocol (Connect JSON, Connect binary, gRPC,
// gRPC-Web) over HTTP/1.1 and h2c, with valid, mutated and random bodies, wrong content types and
// valid, absent, expired, forged and garbage credentials.
import { create, fromBinary, fromJsonString, toBinary, toJsonString, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { MusicService } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import type { ComponentName } from "@flaplab/component";
import { CALLER_HEADER } from "@flaplab/runtime";
import { generateWorld } from "@flaplab/worldgen";
import fc from "fast-check";
import { post1, post2, type Answer } from "../http.js";
import { GAME_PLACEHOLDER, messageOf } from "../messages.js";
import { applyMutation, concatBytes, hex, mutations, randomBytes, type Mutation } from "../mutate.js";
import { accepted, clear, crash, type Target, type TargetContext, type Verdict } from "../runner.js";
import type { Credentials } from "../server.js";

export const SERVICES: readonly DescService[] = [AuthService, InitiatorService, WorldGenService, EngineService, MusicService, ScoreService];

type Protocol = "connect-json" | "connect-proto" | "grpc" | "grpc-web";
type Auth = keyof Credentials | "right" | "none" | "garbage" | "no-scheme" | "huge" | "alg-none" | "empty-bearer";

interface RpcCase {
  readonly protocol: Protocol;
  readonly http: "1.1" | "h2c";
  /** undefined: the protocol's own content type. */
  readonly contentType: string | undefined;
  readonly auth: Auth;
  readonly garbage: string;
  /** A caller header (believed only with a component credential). */
  readonly caller: string | undefined;
  /** connect-timeout-ms / grpc-timeout value. */
  readonly timeout: string | undefined;
  readonly message: Record<string, unknown>;
  readonly body:
    | { readonly kind: "valid" }
    | { readonly kind: "mutated"; readonly mutations: readonly Mutation[] }
    | { readonly kind: "random"; readonly bytes: Uint8Array }
    /** gRPC / gRPC-Web envelope whose flags and length lie. */
    | { readonly kind: "envelope"; readonly flags: number; readonly length: number; readonly extra: Uint8Array; readonly frames: number };
}

const PROTOCOL_TYPES: Record<Protocol, string> = {
  "connect-json": "application/json",
  "connect-proto": "application/proto",
  grpc: "application/grpc+proto",
  "grpc-web": "application/grpc-web+proto",
};

const WRONG_TYPES = [
  "application/json",
  "application/proto",
  "application/grpc",
  "application/grpc+json",
  "application/grpc-web-text",
  "application/grpc-web+json",
  "application/connect+proto",
  "application/connect+json",
  "text/plain",
  "multipart/form-data; boundary=x",
  "application/json; charset=latin1",
  "",
];

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });

function fuzzedCase(method: DescMethod): fc.Arbitrary<RpcCase> {
  return fc.record({
    protocol: fc.constantFrom<Protocol>("connect-json", "connect-proto", "grpc", "grpc-web"),
    http: fc.constantFrom<"1.1" | "h2c">("1.1", "h2c", "h2c"),
    contentType: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom(...WRONG_TYPES), printable) }),
    auth: fc.constantFrom<Auth>("right", "right", "right", "player", "engine", "initiator", "none", "expired", "forged", "forgedComponent", "garbage", "no-scheme", "huge", "alg-none", "empty-bearer"),
    garbage: printable,
    caller: fc.option(fc.constantFrom("engine", "initiator", "auth", "score", "music", "worldgen", "admin", ""), { freq: 3 }).map((v) => v ?? undefined),
    timeout: fc.option(fc.oneof(fc.constantFrom("0", "1", "-1", "1n", "99999999999H", "abc", "10000", "1S", "18446744073709551616"), printable), { freq: 8 }).map((v) => v ?? undefined),
    message: fc.oneof(messageOf(method.input) as fc.Arbitrary<Record<string, unknown>>, plausible(method)),
    body: fc.oneof(
      { weight: 3, arbitrary: fc.constant({ kind: "valid" as const }) },
      { weight: 4, arbitrary: mutations.map((m) => ({ kind: "mutated" as const, mutations: m })) },
      { weight: 2, arbitrary: randomBytes(4096).map((bytes) => ({ kind: "random" as const, bytes })) },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant("envelope" as const),
          flags: fc.constantFrom(0, 1, 2, 0x80, 0xff),
          length: fc.oneof(fc.constantFrom(0, 1, 0xffffffff, 0x7fffffff, 4 * 1024 * 1024 + 1), fc.nat({ max: 0xffffffff })),
          extra: fc.uint8Array({ maxLength: 32 }),
          frames: fc.integer({ min: 1, max: 3 }),
        }),
      },
    ),
  });
}

/** A call as a well-behaved client makes it: right protocol, credential and a plausible message. */
function wellFormedCase(method: DescMethod): fc.Arbitrary<RpcCase> {
  return fc.record({
    protocol: fc.constantFrom<Protocol>("connect-json", "connect-proto", "grpc", "grpc-web"),
    http: fc.constantFrom<"1.1" | "h2c">("1.1", "h2c"),
    contentType: fc.constant(undefined),
    auth: fc.constant<Auth>("right"),
    garbage: fc.constant(""),
    caller: fc.constant(undefined),
    timeout: fc.constant(undefined),
    message: plausible(method),
    body: fc.constant({ kind: "valid" as const }),
  });
}

function rpcCase(method: DescMethod): fc.Arbitrary<RpcCase> {
  return fc.oneof({ weight: 3, arbitrary: wellFormedCase(method) }, { weight: 7, arbitrary: fuzzedCase(method) });
}

/** Public methods take a player's token; internal ones a component credential. */
const PUBLIC = new Set(["flaplab.auth.v1.AuthService", "flaplab.initiator.v1.InitiatorService", "flaplab.score.v1.ScoreService/GetScores"]);
const isPublic = (m: DescMethod) => PUBLIC.has(m.parent.typeName) || PUBLIC.has(`${m.parent.typeName}/${m.name}`);
/** Internal methods the initiator calls (the call graph's edges; the engine calls the others): the right credential's component. */
const INITIATOR_CALLS = new Set(["flaplab.worldgen.v1.WorldGenService/GenerateWorld", "flaplab.engine.v1.EngineService/StartGame", "flaplab.engine.v1.EngineService/ResumeGame"]);
const callerOf = (m: DescMethod): "engine" | "initiator" => (INITIATOR_CALLS.has(`${m.parent.typeName}/${m.name}`) ? "initiator" : "engine");

const viewport = fc.oneof(fc.constant({ width: 480, height: 640 }), fc.record({ width: fc.integer({ min: 64, max: 4096 }), height: fc.integer({ min: 64, max: 4096 }) }));
const seed = fc.oneof(fc.constant(6977347407732442987n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }));
const newId = fc.uuid();

/** Messages a well-behaved caller would send, so that cases also reach the handlers' success paths. */
function plausible(method: DescMethod): fc.Arbitrary<Record<string, unknown>> {
  switch (`${method.parent.name}.${method.name}`) {
    case "AuthService.Register":
      return fc.record({ username: fc.stringMatching(/^[a-z][a-z0-9_]{2,15}$/), password: fc.string({ minLength: 8, maxLength: 40 }) });
    case "AuthService.Login":
      return fc.record({ username: fc.constantFrom("fuzzer", "keeper", "nobody"), password: fc.constantFrom("a long enough password", "wrong password!") });
    case "InitiatorService.StartGame":
      return fc.record({ viewport, bird: fc.constant({ width: 34, height: 24 }), seed }, { requiredKeys: [] });
    case "WorldGenService.GenerateWorld":
      return fc.record({ gameId: newId, viewport, seed }, { requiredKeys: ["gameId"] });
    case "EngineService.StartGame":
      return fc.record({ gameId: newId, seed, bird: fc.constant({ width: 34, height: 24 }) }).map(({ gameId, seed: s, bird }) => {
        const w = generateWorld(s, { width: 480, height: 640 });
        return { gameId, bird, world: { seed: w.seed, viewport: w.viewport, pipeSpacing: w.pipeSpacing, pipes: w.pipes } };
      });
    case "EngineService.HandleInput":
      return fc.record({ gameId: fc.constant(GAME_PLACEHOLDER), key: fc.constant(1), seq: fc.integer({ min: 1, max: 50 }), clientTimeMs: fc.double({ min: 0, max: 1e6, noNaN: true }) });
    case "MusicService.PlayMusic":
      return fc.record({ gameId: fc.constant(GAME_PLACEHOLDER), sound: fc.constantFrom(1, 1, 1, 2, 2, 3), inputSeq: fc.nat(100), tick: fc.nat(1000) });
    case "ScoreService.RecordRun":
      return fc.record({ gameId: newId, score: fc.nat(100), ticks: fc.nat(10000), seed });
    case "ScoreService.GetScores":
      return fc.record({ limit: fc.nat(100) });
    default:
      return messageOf(method.input) as fc.Arbitrary<Record<string, unknown>>;
  }
}

function envelope(flags: number, length: number, body: Uint8Array): Uint8Array {
  const head = new Uint8Array(5);
  head[0] = flags;
  new DataView(head.buffer).setUint32(1, length >>> 0);
  return concatBytes(head, body);
}

function messageBytes(method: DescMethod, c: RpcCase, gameId: string): Uint8Array {
  const msg = create(method.input, { ...c.message } as never) as unknown as Record<string, unknown>;
  if (msg["gameId"] === GAME_PLACEHOLDER) msg["gameId"] = gameId;
  if (c.protocol === "connect-json") {
    let text: string;
    try {
      text = toJsonString(method.input, msg as never);
    } catch {
      text = "{}"; // NaN in an int64 and the like cannot be written as JSON by the encoder itself
    }
    return new TextEncoder().encode(text);
  }
  return toBinary(method.input, msg as never);
}

/** The request body of a case. */
function bodyOf(method: DescMethod, c: RpcCase, gameId: string): Uint8Array {
  const enveloped = c.protocol === "grpc" || c.protocol === "grpc-web";
  const valid = messageBytes(method, c, gameId);
  switch (c.body.kind) {
    case "valid":
      return enveloped ? envelope(0, valid.length, valid) : valid;
    case "mutated": {
      // Mutations hit the envelope too (its flags and length prefix).
      const base = enveloped ? envelope(0, valid.length, valid) : valid;
      return c.body.mutations.reduce(applyMutation, base);
    }
    case "random":
      return c.body.bytes;
    case "envelope": {
      const { flags, length, extra, frames } = c.body;
      return concatBytes(...Array.from({ length: frames }, () => envelope(flags, length, concatBytes(valid, extra))));
    }
  }
}

function headersOf(method: DescMethod, c: RpcCase, creds: Credentials): Record<string, string> {
  const h: Record<string, string> = { "content-type": c.contentType ?? PROTOCOL_TYPES[c.protocol] };
  if (c.protocol === "grpc") h["te"] = "trailers";
  if (c.protocol === "grpc-web") h["x-grpc-web"] = "1";
  if (c.protocol.startsWith("connect") && c.garbage.length % 2 === 0) h["connect-protocol-version"] = "1";
  const auth = authorization(c.auth === "right" ? { ...c, auth: isPublic(method) ? "player" : callerOf(method) } : c, creds, componentOf(method));
  if (auth !== undefined) h["authorization"] = auth;
  if (c.caller !== undefined) h[CALLER_HEADER] = c.caller;
  if (c.timeout !== undefined) h[c.protocol.startsWith("connect") ? "connect-timeout-ms" : "grpc-timeout"] = c.timeout;
  return h;
}

/** The component a method belongs to: `flaplab.<component>.v1.<Service>`. */
const componentOf = (m: DescMethod): ComponentName => m.parent.typeName.split(".")[1] as ComponentName;

function authorization(c: RpcCase, creds: Credentials, callee: ComponentName): string | undefined {
  switch (c.auth) {
    case "right":
    case "none":
      return undefined;
    case "garbage":
      return `Bearer ${c.garbage}`;
    case "no-scheme":
      return creds.player;
    case "huge":
      return `Bearer ${"A".repeat(8000)}`;
    case "empty-bearer":
      return "Bearer ";
    case "alg-none": {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      return `Bearer ${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "keeper", aud: "flaplab", iss: "flaplab-auth", exp: 9999999999 })}.`;
    }
    case "engine":
    case "initiator":
      return `Bearer ${creds[c.auth][callee]}`;
    default:
      return `Bearer ${creds[c.auth]}`;
  }
}

const CONNECT_CODES = new Set([
  "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found", "already_exists", "permission_denied",
  "resource_exhausted", "failed_precondition", "aborted", "out_of_range", "unimplemented", "internal", "unavailable",
  "data_loss", "unauthenticated",
]);
const GRPC_NAMES = ["ok", ...CONNECT_CODES];
/** Codes that mean the handler failed in a way nobody planned: an exception became the answer. */
const UNPLANNED = new Set(["unknown", "internal"]);
/**
 * `internal` answers of the protocol layer itself, for framing the client broke (gRPC's own rule for
 * a compressed flag without an encoding): clear errors, not failures of a handler.
 */
const FRAMING_INTERNAL = /^(\[internal\] )?(received compressed envelope|protocol error|premature eof)/i;

function codeVerdict(protocol: string, code: string, message: string): Verdict {
  if (code === "internal" && FRAMING_INTERNAL.test(message)) return clear(`${protocol} internal (framing): ${message.slice(0, 60)}`);
  if (UNPLANNED.has(code)) return crash(`${protocol} ${code}: ${message.slice(0, 200)}`);
  return clear(`${protocol} ${code}`);
}

/** gRPC-Web / gRPC frames of a body: [flags, payload][]. */
function frames(body: Buffer): { flags: number; payload: Buffer }[] | undefined {
  const out: { flags: number; payload: Buffer }[] = [];
  let o = 0;
  while (o < body.length) {
    if (body.length - o < 5) return undefined;
    const len = body.readUInt32BE(o + 1);
    if (body.length - o - 5 < len) return undefined;
    out.push({ flags: body[o]!, payload: body.subarray(o + 5, o + 5 + len) });
    o += 5 + len;
  }
  return out;
}

/** Classifies an answer by the protocol the server answered in (a wrong content type may switch it). */
export function classify(method: DescMethod, a: Answer): Verdict {
  const grpcLike = a.headers["content-type"]?.startsWith("application/grpc") ?? false;
  const protocol: Protocol = !grpcLike ? "connect-proto" : a.headers["content-type"]!.startsWith("application/grpc-web") ? "grpc-web" : "grpc";
  if (!grpcLike) {
    if (a.status === 200 && !grpcLike) {
      try {
        if (a.headers["content-type"]?.startsWith("application/json")) fromJsonString(method.output, a.body.toString("utf8"));
        else fromBinary(method.output, a.body);
        return accepted("connect ok");
      } catch (err) {
        return crash(`200 with a body that is not a ${method.output.typeName}: ${(err as Error).message}`);
      }
    }
    let code: string | undefined;
    let message = "";
    try {
      const j = JSON.parse(a.body.toString("utf8")) as { code?: unknown; message?: unknown };
      if (typeof j.code === "string") code = j.code;
      if (typeof j.message === "string") message = j.message;
    } catch {
      // not a Connect error body
    }
    if (code !== undefined && CONNECT_CODES.has(code)) return codeVerdict("connect", code, message);
    // Fastify's own answers (a content type it cannot parse: 415 with its error code) are clear too.
    if (a.status >= 400 && a.status < 500) return clear(`http ${a.status}${code ? ` ${code}` : ""}`);
    return crash(`http ${a.status} without a Connect error: ${a.body.toString("utf8").slice(0, 120)}`);
  }
  // gRPC and gRPC-Web: the status is in the trailers (headers when trailers-only, the body's trailer frame for gRPC-Web).
  let status = a.trailers["grpc-status"] ?? a.headers["grpc-status"];
  let message = a.trailers["grpc-message"] ?? a.headers["grpc-message"] ?? "";
  const fs = frames(a.body);
  if (fs === undefined) return crash(`a ${protocol} body that is not whole frames: ${hex(a.body, 64)}`);
  if (protocol === "grpc-web" && status === undefined) {
    const t = fs.find((f) => (f.flags & 0x80) !== 0);
    if (t) {
      const text = t.payload.toString("utf8");
      status = /grpc-status:\s*(\d+)/i.exec(text)?.[1];
      message = /grpc-message:\s*([^\r\n]*)/i.exec(text)?.[1] ?? "";
    }
  }
  if (status === undefined) return a.status >= 400 && a.status < 500 ? clear(`http ${a.status}`) : crash(`${protocol} answer without grpc-status (http ${a.status})`);
  const n = Number(status);
  const name = GRPC_NAMES[n];
  if (!Number.isInteger(n) || name === undefined) return crash(`grpc-status ${status}`);
  if (n === 0) {
    const data = fs.filter((f) => (f.flags & 0x80) === 0);
    try {
      if (data.length !== 1) throw new Error(`${data.length} messages`);
      fromBinary(method.output, data[0]!.payload);
      return accepted(`${protocol} ok`);
    } catch (err) {
      return crash(`grpc-status 0 with a body that is not one ${method.output.typeName}: ${(err as Error).message}`);
    }
  }
  return codeVerdict(protocol, name, decodeURIComponent(message));
}

/** The target of one method. A real game of the fuzz player stands in for the game id placeholder. */
export function rpcTarget(service: DescService, method: DescMethod): Target<RpcCase> {
  let game: { id: string; used: number; restarts: number; close?: (() => void) | undefined } | undefined;
  // PlayMusic pushes a clip to the game's music stream: the game gets one, as in a real game.
  const withMusic = method.parent.typeName === "flaplab.music.v1.MusicService";
  return {
    name: `rpc ${service.name.replace(/Service$/, "")}.${method.name}`,
    remote: true,
    timeoutMs: 10_000,
    arbitrary: rpcCase(method),
    async run(c, { server, signal }: TargetContext) {
      if (!game || game.used++ > (withMusic ? 25 : 200) || game.restarts !== server.restarts) {
        game?.close?.();
        const g = await server.newGame();
        const id = g?.id ?? "no-game";
        const close = withMusic && g ? await server.openMusicStream(g.id, g.ticket).catch(() => undefined) : undefined;
        game = { id, used: 0, restarts: server.restarts, close };
      }
      const path = `/${service.typeName}/${method.name}`;
      const body = bodyOf(method, c, game.id);
      const headers = headersOf(method, c, server.credentials);
      let answer: Answer;
      try {
        answer = c.http === "1.1" ? await post1(server.baseUrl, path, headers, body, signal) : await post2(server.baseUrl, path, headers, body, signal);
      } catch (err) {
        if (signal.aborted) return { kind: "hang", detail: "no answer in time" };
        return crash(`no answer: ${(err as Error).message}`);
      }
      return classify(method, answer);
    },
    show(c) {
      const { message, ...rest } = c;
      const body = bodyOf(method, c, GAME_PLACEHOLDER);
      return `${JSON.stringify(rest, (_k, v: unknown) => (v instanceof Uint8Array ? hex(v, 64) : typeof v === "bigint" ? String(v) : v))} body=${hex(body, 200)}`;
    },
  };
}

export function rpcTargets(): Target<RpcCase>[] {
  return SERVICES.flatMap((s) => s.methods.map((m) => rpcTarget(s, m)));
}
