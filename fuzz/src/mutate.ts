// Byte-level case generators shared by the targets: random bytes, and valid encodings mutated by bit
// flips, truncation, insertion, length-prefix lies and huge varints.
import fc from "fast-check";

/** A LEB128 (protobuf) varint of `n` (a bigint up to 2^64, or more to make it overlong). */
export function leb128(n: bigint): Uint8Array {
  const out: number[] = [];
  let v = n;
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? byte | 0x80 : byte);
  } while (v > 0n);
  return Uint8Array.from(out);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Random bytes, mostly short, sometimes up to `max`. */
export function randomBytes(max = 2048): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: max }) },
  );
}

/** Lengths that lie: zero, off by one, the 32-bit maximum, 2^63 and beyond. */
export const lyingLength = fc.oneof(
  fc.constantFrom(0n, 1n, 127n, 128n, 0xffffn, 0xffffffffn, 0x7fffffffn, 2n ** 53n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 70n),
  fc.bigInt({ min: 0n, max: 2n ** 64n }),
);

/** A varint over ten bytes: continuation bits that never end, or a value beyond 64 bits. */
export const hugeVarint: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.integer({ min: 6, max: 40 }).map((n) => new Uint8Array(n).fill(0xff)),
  fc.bigInt({ min: 2n ** 64n, max: 2n ** 90n }).map(leb128),
  fc.constant(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)),
);

export type Mutation =
  | { op: "flip"; at: number; bit: number }
  | { op: "truncate"; at: number }
  | { op: "insert"; at: number; bytes: Uint8Array }
  | { op: "delete"; at: number; count: number }
  | { op: "set"; at: number; value: number }
  | { op: "varint"; at: number; bytes: Uint8Array }
  | { op: "duplicate"; times: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: fc.constantFrom(0x00, 0x7f, 0x80, 0xff, 0x0a, 0x12, 0x22) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("varint" as const), at: fc.nat(), bytes: hugeVarint }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("duplicate" as const), times: fc.integer({ min: 2, max: 4 }) }) },
);

export function applyMutation(input: Uint8Array, m: Mutation): Uint8Array {
  const at = input.length === 0 ? 0 : m.op === "duplicate" ? 0 : (m as { at: number }).at % (input.length + 1);
  switch (m.op) {
    case "flip": {
      if (input.length === 0) return input;
      const out = input.slice();
      out[at % input.length]! ^= 1 << m.bit;
      return out;
    }
    case "truncate":
      return input.slice(0, at);
    case "insert":
      return concatBytes(input.subarray(0, at), m.bytes, input.subarray(at));
    case "delete":
      return concatBytes(input.subarray(0, at), input.subarray(at + m.count));
    case "set": {
      if (input.length === 0) return Uint8Array.of(m.value);
      const out = input.slice();
      out[at % input.length] = m.value;
      return out;
    }
    case "varint":
      return concatBytes(input.subarray(0, at), m.bytes, input.subarray(at));
    case "duplicate":
      return concatBytes(...Array.from({ length: m.times }, () => input));
  }
}

/** One to four mutations. */
export const mutations = fc.array(mutation, { minLength: 1, maxLength: 4 });

/** `valid` encodings with one to four mutations applied. */
export function mutated(valid: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([bytes, ms]) => ms.reduce(applyMutation, bytes));
}

/** A mix: valid encodings, mutated ones, and random bytes. */
export function bytesFrom(valid: fc.Arbitrary<Uint8Array>, max = 2048): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 2, arbitrary: valid },
    { weight: 5, arbitrary: mutated(valid) },
    { weight: 3, arbitrary: randomBytes(max) },
  );
}

export const hex = (b: Uint8Array, max = 256): string =>
  Buffer.from(b.subarray(0, max)).toString("hex") + (b.length > max ? `…(${b.length} bytes)` : "");
