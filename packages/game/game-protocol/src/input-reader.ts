import { StreamProtocolError } from "./delimited.js";

/** A length prefix longer than this is refused: 5 bytes hold every uint32 length. */
const MAX_PREFIX_BYTES = 5;

/**
 * The engine's reader of the game stream's client messages: size-delimited `ClientInput { uint32
 * seq = 1; double client_time_ms = 2; }`, however the transport chunked them, handed over as
 * `(seq, clientTimeMs)` with no object per message (what `DelimitedDecoder` + `fromBinary` made
 * for every input: ≈ 0.5 KB of garbage a press, thousands of games' worth). Decodes as protobuf
 * does: fields in any order, the last of a repeated field wins, unknown fields of wire types 0, 1,
 * 2 and 5 skipped, absent fields 0. Throws StreamProtocolError ("too-large" over `maxBytes`,
 * "malformed" for a broken prefix or message), as `DelimitedDecoder` does; the tests compare
 * both on the same bytes.
 */
export class ClientInputReader {
  /** Bytes of an incomplete message, kept between chunks (grows to at most maxBytes + 5). */
  private carry = new Uint8Array(32);
  private carryLength = 0;
  private readonly scratch = new DataView(new ArrayBuffer(8));
  /** Read position inside the message being decoded. */
  private at = 0;

  constructor(private readonly maxBytes = 256) {}

  /** Bytes of an incomplete message waiting for more input. */
  get pending(): number {
    return this.carryLength;
  }

  /**
   * Reads the messages `chunk` completes, in order, calling `onInput` for each; stops early when
   * it returns false (the rest of the chunk is dropped: the stream is being closed).
   */
  push(chunk: Uint8Array, onInput: (seq: number, clientTimeMs: number) => boolean | undefined): void {
    let buf = chunk;
    let end = chunk.length;
    if (this.carryLength > 0) {
      this.append(chunk);
      buf = this.carry;
      end = this.carryLength;
    }
    let offset = 0;
    while (offset < end) {
      // The length prefix: an unsigned varint of at most 5 bytes.
      let length = 0;
      let i = offset;
      let shift = 0;
      let complete = false;
      while (i < end) {
        const b = buf[i++] as number;
        if (i - offset === MAX_PREFIX_BYTES) {
          // As DelimitedDecoder: five continuing bytes are no uint32; the fifth holds bits 28–31 only.
          if ((b & 0x80) !== 0) throw new StreamProtocolError("message length is not a valid varint", "malformed");
          if (b > 0x0f) throw new StreamProtocolError("message length is not a valid varint: over 32 bits", "malformed");
        }
        length += (b & 0x7f) * 2 ** shift;
        shift += 7;
        if ((b & 0x80) === 0) {
          complete = true;
          break;
        }
      }
      if (!complete) break;
      if (length > this.maxBytes) throw new StreamProtocolError(`message of ${length} bytes is over the limit of ${this.maxBytes}`, "too-large");
      if (end - i < length) break;
      const keepGoing = this.decode(buf, i, i + length, onInput);
      offset = i + length;
      if (keepGoing === false) {
        this.carryLength = 0;
        return;
      }
    }
    this.keep(buf, offset, end);
  }

  private decode(buf: Uint8Array, start: number, end: number, onInput: (seq: number, clientTimeMs: number) => boolean | undefined): boolean | undefined {
    let seq = 0;
    let clientTimeMs = 0;
    this.at = start;
    while (this.at < end) {
      // Tag: a varint (field number << 3 | wire type); field numbers here fit in 4 bytes.
      const tag = this.varint(buf, end, 5, "a field tag");
      const field = Math.floor(tag / 8);
      const wireType = tag & 7;
      if (field === 0) return malformed("field number 0");
      switch (wireType) {
        case 0: {
          // Up to 10 bytes; uint32 keeps the low 32 bits, as protobuf does.
          const value = this.varint(buf, end, 10, "a varint");
          if (field === 1) seq = value % 2 ** 32;
          break;
        }
        case 1:
          if (end - this.at < 8) return malformed("premature end of a 64-bit field");
          if (field === 2) {
            for (let k = 0; k < 8; k++) this.scratch.setUint8(k, buf[this.at + k] as number);
            clientTimeMs = this.scratch.getFloat64(0, true);
          }
          this.at += 8;
          break;
        case 2: {
          const length = this.varint(buf, end, 5, "a length");
          if (end - this.at < length) return malformed("premature end of a length-delimited field");
          this.at += length;
          break;
        }
        case 5:
          if (end - this.at < 4) return malformed("premature end of a 32-bit field");
          this.at += 4;
          break;
        default:
          return malformed(`wire type ${wireType} is not supported`);
      }
      if ((field === 1 && wireType !== 0) || (field === 2 && wireType !== 1)) return malformed(`field ${field} has the wrong wire type`);
    }
    return onInput(seq, clientTimeMs);
  }

  /**
   * The varint at `this.at` (moved past it), of at most `maxBytes` bytes; the value of its first
   * five bytes (what a uint32 or a length needs).
   */
  private varint(buf: Uint8Array, end: number, maxBytes: number, what: string): number {
    let value = 0;
    for (let n = 0; ; n++) {
      if (this.at >= end) return malformed(`premature end of ${what}`);
      const b = buf[this.at++] as number;
      if (n < 5) value += (b & 0x7f) * 2 ** (7 * n);
      if ((b & 0x80) === 0) return value;
      if (n + 1 >= maxBytes) return malformed(`${what} is not a valid varint`);
    }
  }

  /** Appends a chunk to the carried bytes. */
  private append(chunk: Uint8Array): void {
    const need = this.carryLength + chunk.length;
    if (need > this.carry.length) {
      const grown = new Uint8Array(Math.max(need, this.carry.length * 2));
      grown.set(this.carry.subarray(0, this.carryLength));
      this.carry = grown;
    }
    this.carry.set(chunk, this.carryLength);
    this.carryLength = need;
  }

  /** Keeps `buf[from, end)` for the next chunk: a private copy, the transport may reuse its chunk. */
  private keep(buf: Uint8Array, from: number, end: number): void {
    const rest = end - from;
    if (rest === 0) {
      this.carryLength = 0;
      return;
    }
    if (buf === this.carry) {
      this.carry.copyWithin(0, from, end);
    } else {
      if (rest > this.carry.length) this.carry = new Uint8Array(Math.max(rest, this.carry.length * 2));
      this.carry.set(buf.subarray(from, end));
    }
    this.carryLength = rest;
  }
}

function malformed(reason: string): never {
  throw new StreamProtocolError(`cannot decode flaplab.engine.v1.ClientInput: ${reason}`, "malformed");
}
