import { create } from "@bufbuild/protobuf";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { describe, expect, it } from "vitest";
import { DelimitedDecoder, StreamProtocolError, encodeDelimited } from "../src/index.js";
import { concat } from "./bytes.js";

function input(seq: number, clientTimeMs = 1234.5) {
  return create(ClientInputSchema, { seq, clientTimeMs });
}


function protocolError(fn: () => unknown): StreamProtocolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StreamProtocolError) return err;
    throw err;
  }
  throw new Error("expected a StreamProtocolError");
}

describe("encodeDelimited", () => {
  it("prefixes the message with its length as a varint", () => {
    const bytes = encodeDelimited(ClientInputSchema, input(1));
    expect(bytes[0]).toBe(bytes.length - 1);
    // 300-byte body: a two-byte prefix 0xac 0x02.
    const clip = create(SoundClipSchema, { audio: new Uint8Array(297) });
    const big = encodeDelimited(SoundClipSchema, clip);
    expect(big.length - 2).toBe(300);
    expect([big[0], big[1]]).toEqual([0xac, 0x02]);
  });
});

describe("DelimitedDecoder", () => {
  it("splits a stream however it is chunked", () => {
    const stream = concat(
      encodeDelimited(ClientInputSchema, input(1)),
      encodeDelimited(ClientInputSchema, input(2, 0)),
      encodeDelimited(ClientInputSchema, input(300, 99)),
    );
    for (let cut = 0; cut <= stream.length; cut++) {
      for (let cut2 = cut; cut2 <= stream.length; cut2 += 3) {
        const decoder = new DelimitedDecoder(ClientInputSchema);
        const got = [
          ...decoder.push(stream.subarray(0, cut)),
          ...decoder.push(stream.subarray(cut, cut2)),
          ...decoder.push(stream.subarray(cut2)),
        ];
        expect(got.map((m) => [m.seq, m.clientTimeMs])).toEqual([
          [1, 1234.5],
          [2, 0],
          [300, 99],
        ]);
        expect(decoder.pending).toBe(0);
      }
    }
  });

  it("gives each message's size on the stream, prefix included, however the stream is chunked", () => {
    const clip = (inputSeq: number, size: number) =>
      encodeDelimited(SoundClipSchema, create(SoundClipSchema, { inputSeq, audio: new Uint8Array(size).fill(1) }));
    // One-, two- and three-byte length prefixes.
    const parts = [clip(1, 10), clip(2, 300), clip(3, 20_000)];
    const stream = concat(...parts);
    for (let cut = 0; cut <= stream.length; cut += 97) {
      const decoder = new DelimitedDecoder(SoundClipSchema, 64 * 1024);
      const got = [...decoder.pushSized(stream.subarray(0, cut)), ...decoder.pushSized(stream.subarray(cut))];
      expect(got.map((g) => g.bytes)).toEqual(parts.map((p) => p.length));
      expect(got.map((g) => g.message.audio.length)).toEqual([10, 300, 20_000]);
      const each = new DelimitedDecoder(SoundClipSchema, 64 * 1024);
      const emitted: number[] = [];
      const emit = (message: { inputSeq: number }, bytes: number) => emitted.push(message.inputSeq, bytes);
      each.each(stream.subarray(0, cut), emit);
      each.each(stream.subarray(cut), emit);
      expect(emitted).toEqual(parts.flatMap((p, i) => [i + 1, p.length]));
    }
  });

  it("decodes a message split inside a multi-byte length prefix", () => {
    const clip = create(SoundClipSchema, { mediaType: "audio/wav", audio: new Uint8Array(500).fill(7) });
    const bytes = encodeDelimited(SoundClipSchema, clip);
    const decoder = new DelimitedDecoder(SoundClipSchema);
    expect(decoder.push(bytes.subarray(0, 1))).toEqual([]);
    expect(decoder.pending).toBe(1);
    const [got] = decoder.push(bytes.subarray(1));
    expect(got?.audio).toEqual(clip.audio);
  });

  it("keeps its own copy of an incomplete message when the transport reuses its chunk", () => {
    const bytes = encodeDelimited(ClientInputSchema, input(42, 7));
    const chunk = new Uint8Array(bytes.length);
    const decoder = new DelimitedDecoder(ClientInputSchema);
    // The first half arrives in a buffer that the transport then overwrites with the second half.
    const half = 4;
    chunk.set(bytes.subarray(0, half));
    expect(decoder.push(chunk.subarray(0, half))).toEqual([]);
    chunk.fill(0xff);
    chunk.set(bytes.subarray(half));
    const got = decoder.push(chunk.subarray(0, bytes.length - half));
    expect(got.map((m) => m.seq)).toEqual([42]);
  });

  it("keeps its own copy of what follows a complete message", () => {
    const a = encodeDelimited(ClientInputSchema, input(1));
    const b = encodeDelimited(ClientInputSchema, input(2));
    const chunk = concat(a, b.subarray(0, 3));
    const decoder = new DelimitedDecoder(ClientInputSchema);
    expect(decoder.push(chunk).map((m) => m.seq)).toEqual([1]);
    chunk.fill(0xff);
    expect(decoder.push(b.subarray(3)).map((m) => m.seq)).toEqual([2]);
  });

  it("rejects a message over the limit as too-large, before it arrives", () => {
    const decoder = new DelimitedDecoder(ClientInputSchema, 16);
    const err = protocolError(() => decoder.push(new Uint8Array([0x80, 0x01])));
    expect(err.kind).toBe("too-large");
    expect(err.message).toBe("message of 128 bytes is over the limit of 16");
  });

  it("rejects bytes that do not decode as malformed", () => {
    const decoder = new DelimitedDecoder(ClientInputSchema);
    // Length 2, then field 1 with wire type 7 (invalid).
    const err = protocolError(() => decoder.push(new Uint8Array([2, 0x0f, 0x00])));
    expect(err.kind).toBe("malformed");
    expect(err.message).toMatch(/^cannot decode flaplab\.engine\.v1\.ClientInput: /);
  });

  it("rejects a length varint longer than five bytes as malformed", () => {
    const decoder = new DelimitedDecoder(ClientInputSchema, Number.MAX_SAFE_INTEGER);
    const err = protocolError(() => decoder.push(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])));
    expect(err.kind).toBe("malformed");
  });

  it("rejects a five-byte length varint over 32 bits as malformed, not as a shorter length", () => {
    const decoder = new DelimitedDecoder(ClientInputSchema, Number.MAX_SAFE_INTEGER);
    const err = protocolError(() => decoder.push(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x10, 0x08, 0x01])));
    expect(err.kind).toBe("malformed");
  });

  it("accepts an empty message", () => {
    const decoder = new DelimitedDecoder(ClientInputSchema);
    expect(decoder.push(new Uint8Array([0])).map((m) => m.seq)).toEqual([0]);
  });
});
