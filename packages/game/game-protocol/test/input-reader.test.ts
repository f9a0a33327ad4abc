import { create, toBinary } from "@bufbuild/protobuf";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { describe, expect, it } from "vitest";
import { ClientInputReader, DelimitedDecoder, encodeDelimited, StreamProtocolError } from "../src/index.js";
import { concat } from "./bytes.js";

/** A small seeded generator: every run sees the same cases. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

type Outcome = { inputs: [number, number][] } | { error: "malformed" | "too-large" };

function viaReader(chunks: readonly Uint8Array[], max = 256): Outcome {
  const reader = new ClientInputReader(max);
  const inputs: [number, number][] = [];
  try {
    for (const c of chunks) reader.push(c, (seq, t) => void inputs.push([seq, t]));
  } catch (err) {
    if (err instanceof StreamProtocolError) return { error: err.kind };
    throw err;
  }
  return { inputs };
}

function viaLibrary(chunks: readonly Uint8Array[], max = 256): Outcome {
  const decoder = new DelimitedDecoder(ClientInputSchema, max);
  const inputs: [number, number][] = [];
  try {
    for (const c of chunks) for (const m of decoder.push(c)) inputs.push([m.seq, m.clientTimeMs]);
  } catch (err) {
    if (err instanceof StreamProtocolError) return { error: err.kind };
    throw err;
  }
  return { inputs };
}

/** `bytes` cut at random places. */
function chop(bytes: Uint8Array, random: () => number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const n = 1 + Math.floor(random() * Math.min(12, bytes.length - at));
    out.push(bytes.slice(at, at + n));
    at += n;
  }
  return out;
}

describe("ClientInputReader", () => {
  it("reads what encodeDelimited wrote, however it is chunked, exactly as the library decoder does", () => {
    const random = rng(7);
    for (let round = 0; round < 300; round++) {
      const messages = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq: Math.floor(random() * 2 ** 32), clientTimeMs: random() < 0.2 ? 0 : random() * 2e12 })),
      );
      const chunks = chop(concat(...messages), random);
      const got = viaReader(chunks);
      expect(got).toEqual(viaLibrary(chunks));
      expect((got as { inputs: unknown[] }).inputs).toHaveLength(messages.length);
    }
  });

  it("skips unknown fields, keeps the last of a repeated field, and reads absent fields as 0", () => {
    // seq=5, an unknown varint field 3, an unknown string field 4, a 32-bit field 6, seq=9 again, time 1.5.
    const time = new Uint8Array(new Float64Array([1.5]).buffer);
    const body = new Uint8Array([0x08, 5, 0x18, 0x96, 0x01, 0x22, 2, 0x61, 0x62, 0x35, 1, 2, 3, 4, 0x08, 9, 0x11, ...time]);
    const message = new Uint8Array([body.length, ...body]);
    expect(viaReader([message])).toEqual({ inputs: [[9, 1.5]] });
    expect(viaLibrary([message])).toEqual({ inputs: [[9, 1.5]] });
    expect(viaReader([new Uint8Array([0])])).toEqual({ inputs: [[0, 0]] });
  });

  it("refuses what the library refuses: a message over the limit, a broken prefix, a truncated field", () => {
    const cases: Uint8Array[][] = [
      [new Uint8Array([0x81, 0x02])], // 257 bytes announced, limit 256
      [new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff])], // five continuing prefix bytes
      [new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x7f])], // over 32 bits
      [new Uint8Array([2, 0x08, 0x96])], // a varint cut by the end of the message
      [new Uint8Array([5, 0x11, 1, 2, 3, 4])], // a double cut short
    ];
    for (const chunks of cases) {
      const library = viaLibrary(chunks);
      expect("error" in library, `library on ${[...chunks[0]!]}`).toBe(true);
      expect(viaReader(chunks), `reader on ${[...chunks[0]!]}`).toEqual(library);
    }
  });

  it("refuses groups (wire types 3 and 4), which ClientInput has no use for, where the library skips them", () => {
    expect(viaReader([new Uint8Array([2, 0x0b, 0x0c])])).toEqual({ error: "malformed" });
    expect(viaReader([new Uint8Array([1, 0x0c])])).toEqual({ error: "malformed" });
  });

  it("on random bytes, never accepts what the library refuses, and agrees on what both accept", () => {
    const random = rng(11);
    for (let round = 0; round < 2000; round++) {
      const bytes = Uint8Array.from({ length: 1 + Math.floor(random() * 24) }, () => Math.floor(random() * 256));
      const chunks = chop(bytes, random);
      const reader = viaReader(chunks, 64);
      const library = viaLibrary(chunks, 64);
      if ("error" in library) expect(reader, `${[...bytes]}`).toHaveProperty("error");
      else if ("inputs" in reader) expect(reader, `${[...bytes]}`).toEqual(library);
    }
  });

  it("keeps an incomplete message across chunks in its own copy, and stops where it is told", () => {
    const reader = new ClientInputReader();
    const bytes = encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq: 3, clientTimeMs: 2 }));
    const first = bytes.slice(0, 4);
    const got: number[] = [];
    reader.push(first, (seq) => void got.push(seq));
    first.fill(0xff); // the transport reuses its chunk
    expect(reader.pending).toBe(4);
    reader.push(bytes.slice(4), (seq) => void got.push(seq));
    expect(got).toEqual([3]);
    expect(reader.pending).toBe(0);

    const two = concat(bytes, bytes, bytes);
    const seen: number[] = [];
    reader.push(two, (seq) => {
      seen.push(seq);
      return false;
    });
    expect(seen).toEqual([3]);
    expect(reader.pending).toBe(0);
    expect(toBinary(ClientInputSchema, create(ClientInputSchema, { seq: 3, clientTimeMs: 2 })).length).toBe(bytes.length - 1);
  });
});
