import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { encodeFlappyGoFrame, FLAPPYGO_GAME_ID, type FlappyGoFrame, sizeDelimited } from "../src/flappygo-frame.js";

const frame = (n: number, over: Partial<FlappyGoFrame> = {}): FlappyGoFrame => ({
  gameId: FLAPPYGO_GAME_ID,
  birdX: 50,
  birdY: 231.75,
  pipePositions: Array.from({ length: n }, (_, i) => 120.5 + 263 * i),
  pipeStarts: Array.from({ length: n }, (_, i) => 80 + i),
  pipeGaps: Array.from({ length: n }, (_, i) => 150 + i),
  score: 3,
  pipeWidth: 72,
  gameOver: false,
  ...over,
});

describe("FlappyGo frame encoding", () => {
  it("is 188 B + 2 B prefix for 5 pipes, score > 0, not over (the FlappyGo spec's figure)", () => {
    // game_id: tag + len + 36 = 38; bird_position: tag + len + (tag + 8) × 2 = 20;
    // 3 packed repeated doubles: (tag + len + 5 × 8) × 3 = 126; score: 2; pipe_width: 2.
    const body = encodeFlappyGoFrame(frame(5));
    expect(body.byteLength).toBe(38 + 20 + 3 * 42 + 2 + 2);
    expect(body.byteLength).toBe(188);
    const sent = sizeDelimited(body);
    expect(sent.byteLength).toBe(190);
    expect([...sent.subarray(0, 2)]).toEqual([0xbc, 0x01]); // 188 as LEB128
  });

  it("is 164 B + 2 for 4 pipes", () => {
    expect(sizeDelimited(encodeFlappyGoFrame(frame(4))).byteLength).toBe(166);
  });

  it("omits proto3 defaults: score 0, bird y 0.0, game_over false; writes game_over true", () => {
    expect(encodeFlappyGoFrame(frame(5, { score: 0 })).byteLength).toBe(186);
    expect(encodeFlappyGoFrame(frame(5, { birdY: 0 })).byteLength).toBe(179);
    expect(encodeFlappyGoFrame(frame(5, { gameOver: true })).byteLength).toBe(190);
  });

  it("writes the fields FlappyGo's message defines, in field order, with the values given", () => {
    const f = frame(5, { score: 7, gameOver: true });
    const r = new BinaryReader(encodeFlappyGoFrame(f));
    const seen: number[] = [];
    const doubles = (bytes: Uint8Array) => {
      const inner = new BinaryReader(bytes);
      const out: number[] = [];
      while (inner.pos < inner.len) out.push(inner.double());
      return out;
    };
    while (r.pos < r.len) {
      const [field, wire] = r.tag();
      seen.push(field);
      switch (field) {
        case 1:
          expect(wire).toBe(WireType.LengthDelimited);
          expect(r.string()).toBe(FLAPPYGO_GAME_ID);
          break;
        case 2: {
          const pos = new BinaryReader(r.bytes());
          expect(pos.tag()).toEqual([1, WireType.Bit64]);
          expect(pos.double()).toBe(50);
          expect(pos.tag()).toEqual([2, WireType.Bit64]);
          expect(pos.double()).toBe(231.75);
          break;
        }
        case 3:
          expect(doubles(r.bytes())).toEqual(f.pipePositions);
          break;
        case 4:
          expect(doubles(r.bytes())).toEqual(f.pipeStarts);
          break;
        case 5:
          expect(doubles(r.bytes())).toEqual(f.pipeGaps);
          break;
        case 6:
          expect(r.int32()).toBe(7);
          break;
        case 7:
          expect(r.int32()).toBe(72);
          break;
        case 8:
          expect(r.bool()).toBe(true);
          break;
        default:
          throw new Error(`unexpected field ${field}`);
      }
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
