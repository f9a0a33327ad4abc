// The pieces the verdicts rest on: the mutators, the frame and varint encoders, and the RPC oracle
// on answers a server could give.
import { create, toBinary } from "@bufbuild/protobuf";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { GetScoresResponseSchema, ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { DelimitedDecoder } from "@flaplab/game-protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyMutation, leb128 } from "../src/mutate.js";
import { formatTable, runTarget, type Target } from "../src/runner.js";
import { roundTrip } from "../src/targets/local.js";
import { classify } from "../src/targets/rpc.js";
import { quicVarint, wsFrame } from "../src/targets/websocket.js";

const getScores = ScoreService.method.getScores;
const answer = (status: number, headers: Record<string, string>, body: Uint8Array | string, trailers: Record<string, string> = {}) => ({
  status,
  headers,
  trailers,
  body: Buffer.from(body),
});
const envelope = (flags: number, payload: Uint8Array | string) => {
  const p = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(p.length, 1);
  return Buffer.concat([head, p]);
};

describe("the RPC oracle", () => {
  const ok = toBinary(GetScoresResponseSchema, create(GetScoresResponseSchema, {}));

  it("accepts a decodable answer in each protocol", () => {
    expect(classify(getScores, answer(200, { "content-type": "application/proto" }, ok)).kind).toBe("accepted");
    expect(classify(getScores, answer(200, { "content-type": "application/json" }, "{}")).kind).toBe("accepted");
    expect(classify(getScores, answer(200, { "content-type": "application/grpc+proto" }, envelope(0, ok), { "grpc-status": "0" })).kind).toBe("accepted");
    const web = Buffer.concat([envelope(0, ok), envelope(0x80, "grpc-status: 0\r\n")]);
    expect(classify(getScores, answer(200, { "content-type": "application/grpc-web+proto" }, web)).kind).toBe("accepted");
  });

  it("calls Connect codes, gRPC statuses and 4xx clear errors", () => {
    expect(classify(getScores, answer(400, { "content-type": "application/json" }, '{"code":"invalid_argument","message":"x"}'))).toEqual({ kind: "clear", detail: "connect invalid_argument" });
    expect(classify(getScores, answer(200, { "content-type": "application/grpc+proto" }, "", { "grpc-status": "16" }))).toEqual({ kind: "clear", detail: "grpc unauthenticated" });
    const web = envelope(0x80, "grpc-status: 8\r\ngrpc-message: busy\r\n");
    expect(classify(getScores, answer(200, { "content-type": "application/grpc-web+proto" }, web))).toEqual({ kind: "clear", detail: "grpc-web resource_exhausted" });
    expect(classify(getScores, answer(415, {}, "")).kind).toBe("clear");
  });

  it("calls an exception turned into internal, a 5xx without a code, a broken answer and a missing status crashes", () => {
    expect(classify(getScores, answer(500, { "content-type": "application/json" }, '{"code":"internal","message":"TypeError: x is undefined"}')).kind).toBe("crash");
    expect(classify(getScores, answer(502, {}, "bad gateway")).kind).toBe("crash");
    expect(classify(getScores, answer(200, { "content-type": "application/proto" }, Uint8Array.of(0xff))).kind).toBe("crash");
    expect(classify(getScores, answer(200, { "content-type": "application/grpc+proto" }, envelope(0, ok))).kind).toBe("crash");
    expect(classify(getScores, answer(200, { "content-type": "application/grpc+proto" }, Uint8Array.of(0, 0, 0, 9))).kind).toBe("crash");
  });
});

describe("the generators", () => {
  it("writes LEB128 and QUIC varints", () => {
    expect([...leb128(300n)]).toEqual([0xac, 0x02]);
    expect([...quicVarint(0x2843)]).toEqual([0x68, 0x43]);
    expect([...quicVarint(0x190b4d3b)]).toEqual([0x99, 0x0b, 0x4d, 0x3b]);
    expect([...quicVarint(5, 8)]).toEqual([0xc0, 0, 0, 0, 0, 0, 0, 5]);
  });

  it("masks WebSocket frames and writes the length forms", () => {
    const f = wsFrame({ fin: true, rsv: 0, opcode: 2, mask: Uint8Array.of(1, 2, 3, 4), lengthForm: "natural", lie: 0, payload: Uint8Array.of(0x10, 0x20) });
    expect([...f]).toEqual([0x82, 0x82, 1, 2, 3, 4, 0x11, 0x22]);
    const long = wsFrame({ fin: false, rsv: 0, opcode: 1, mask: undefined, lengthForm: "64", lie: 3, payload: Uint8Array.of(7) });
    expect([...long]).toEqual([0x01, 127, 0, 0, 0, 0, 0, 0, 0, 4, 7]);
  });

  it("mutates: flips, truncates, inserts", () => {
    const b = Uint8Array.of(1, 2, 3);
    expect([...applyMutation(b, { op: "flip", at: 1, bit: 0 })]).toEqual([1, 3, 3]);
    expect([...applyMutation(b, { op: "truncate", at: 2 })]).toEqual([1, 2]);
    expect([...applyMutation(b, { op: "insert", at: 1, bytes: Uint8Array.of(9) })]).toEqual([1, 9, 2, 3]);
  });

  it("valid delimited streams come back message for message, however they are cut", () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 8 }), fc.array(fc.nat({ max: 200 }), { maxLength: 5 }), (seqs, cuts) => {
        const msgs = seqs.map((seq) => create(ClientInputSchema, { seq, clientTimeMs: seq * 1.5 }));
        expect(roundTrip(ClientInputSchema, msgs, cuts)).toBe(msgs.length);
      }),
      { seed: 7, numRuns: 200 },
    );
    expect(new DelimitedDecoder(ClientInputSchema).push(Uint8Array.of(0x80))).toEqual([]);
  });
});

describe("the runner", () => {
  it("counts every outcome, reports crashes and hangs with their input, and is reproducible by seed", async () => {
    const target: Target<number> = {
      name: "toy",
      remote: false,
      timeoutMs: 50,
      arbitrary: fc.integer({ min: 0, max: 99 }),
      async run(n) {
        if (n % 10 === 0) await new Promise((r) => setTimeout(r, 200)); // a hang
        if (n % 10 === 1) throw new TypeError("boom"); // a crash
        return n % 2 === 0 ? { kind: "accepted", detail: "even" } : { kind: "clear", detail: "odd" };
      },
      show: (n) => `n=${n}`,
    };
    const a = await runTarget(target, { cases: 300, seed: 42, maxFindings: 1000 });
    const b = await runTarget(target, { cases: 300, seed: 42, maxFindings: 1000 });
    expect(a.cases).toBe(300);
    expect(a.clear + a.accepted + a.crashes + a.hangs).toBe(300);
    expect(a.hangs).toBeGreaterThan(0);
    expect(a.crashes).toBeGreaterThan(0);
    expect(a.findings.find((f) => f.kind === "crash")?.detail).toMatch(/TypeError: boom/);
    expect(a.findings.every((f) => /^n=\d+$/.test(f.input))).toBe(true);
    expect([a.clear, a.accepted, a.crashes, a.hangs]).toEqual([b.clear, b.accepted, b.crashes, b.hangs]);
    expect(formatTable([a]).split("\n")[0]).toBe("| target | cases | clear errors | accepted | crashes | hangs | seed |");
  });
});
