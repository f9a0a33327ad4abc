/** GameStreamMessage's `frame` and `ack` fields, length-delimited: the tag before a message body. */
export const FRAME = 0x0a;
export const ACK = 0x1a;
/** Room before a message body for its prefixes: the size varint, the `frame` or `ack` tag and its length. */
const HEADROOM = 11;
/** Bytes a frame without pipes can take; a pipe takes at most 2 + 5 + 2 × 9. */
const FRAME_BOUND = 128;
const PIPE_BOUND = 27;

/**
 * The reusable output of `FrameEncoder.writeFrame` / `writeAck`: one growable buffer, into which
 * each message is written in place (body first, then its prefixes in the headroom before it). One
 * writer serves any number of encoders on a thread. A message stays valid until the next write;
 * `copy()` gives bytes of its own to a transport that queues them.
 *
 * Hand-written rather than `sizeDelimitedEncode(GameStreamMessageSchema, create(…))`: in bench
 * section 3's core work (physics tick + frame, tight loop) the library path allocated 1,842 B and
 * took 2.4–4.1 µs per frame (two BinaryWriters, a sorted field list and the message objects)
 * against 219 B, all of it the transport's copy, and 0.17–0.36 µs here: this one writes ≈ 20
 * bytes into a buffer it keeps. The tests check it byte for byte against the library.
 */
export class FrameWriter {
  private buf: Uint8Array;
  private view: DataView;
  private pos = HEADROOM;
  /** The last message is `buffer[start, end)`. */
  start = HEADROOM;
  end = HEADROOM;

  constructor(initialBytes = 4096) {
    this.buf = new Uint8Array(Math.max(initialBytes, HEADROOM + FRAME_BOUND));
    this.view = new DataView(this.buf.buffer);
  }

  /** The buffer the last message is in (at `start` … `end`); overwritten by the next write. */
  get buffer(): Uint8Array {
    return this.buf;
  }

  /** The last message's length in bytes. */
  get length(): number {
    return this.end - this.start;
  }

  /** The last message in a new array of its own. */
  copy(): Uint8Array {
    return this.buf.slice(this.start, this.end);
  }

  /** Starts a message that will carry `pipes` pipe gaps. */
  begin(pipes: number): void {
    const need = HEADROOM + FRAME_BOUND + pipes * PIPE_BOUND;
    if (need > this.buf.length) {
      this.buf = new Uint8Array(Math.max(need, this.buf.length * 2));
      this.view = new DataView(this.buf.buffer);
    }
    this.pos = HEADROOM;
  }

  /** Ends the message, a `frame` or an `ack`: writes the prefixes before the body; returns the message's length. */
  finish(kind: typeof FRAME | typeof ACK = FRAME): number {
    const bodyLength = this.pos - HEADROOM;
    const messageLength = 1 + varintSize(bodyLength) + bodyLength;
    let at = HEADROOM - varintSize(bodyLength) - 1 - varintSize(messageLength);
    this.start = at;
    at = this.varintAt(at, messageLength);
    this.buf[at++] = kind;
    this.varintAt(at, bodyLength);
    this.end = this.pos;
    return this.end - this.start;
  }

  /** A uint32 field; implicit presence (0 not written) unless `always`. */
  uint32(tag: number, value: number, always = false): void {
    if (value === 0 && !always) return;
    this.buf[this.pos++] = tag;
    this.varint(value >>> 0);
  }

  /** An `optional int32` field (negative values take ten bytes, as protobuf encodes them). */
  int32(tag: number, value: number): void {
    this.buf[this.pos++] = tag;
    if (value >= 0) {
      this.varint(value >>> 0);
      return;
    }
    // Sign-extended to 64 bits: the low 32 bits, then ones.
    let low = value >>> 0;
    for (let i = 0; i < 4; i++) {
      this.buf[this.pos++] = (low & 0x7f) | 0x80;
      low >>>= 7;
    }
    this.buf[this.pos++] = (low & 0x0f) | 0xf0;
    for (let i = 0; i < 4; i++) this.buf[this.pos++] = 0xff;
    this.buf[this.pos++] = 0x01;
  }

  /** An explicit-presence double field. */
  double(tag: number, value: number): void {
    this.buf[this.pos++] = tag;
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  /** An implicit-presence double field: +0 is not written (−0 is, as protobuf-es does). */
  implicitDouble(tag: number, value: number): void {
    if (Object.is(value, 0)) return;
    this.double(tag, value);
  }

  /** A true bool field. */
  bool(tag: number): void {
    this.buf[this.pos++] = tag;
    this.buf[this.pos++] = 1;
  }

  /** One `repeated PipeGap pipes = 7` element. */
  pipe(index: number, gapStart: number, gapHeight: number): void {
    this.buf[this.pos++] = 0x3a;
    const lengthAt = this.pos++;
    const bodyStart = this.pos;
    this.uint32(0x08, index);
    this.implicitDouble(0x11, gapStart);
    this.implicitDouble(0x19, gapHeight);
    // At most 5 + 9 + 9 + 3 tags = 26 bytes: the length always fits in one byte.
    this.buf[lengthAt] = this.pos - bodyStart;
  }

  private varint(value: number): void {
    while (value > 0x7f) {
      this.buf[this.pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buf[this.pos++] = value;
  }

  private varintAt(at: number, value: number): number {
    while (value > 0x7f) {
      this.buf[at++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buf[at++] = value;
    return at;
  }
}

function varintSize(value: number): number {
  let size = 1;
  while (value > 0x7f) {
    value >>>= 7;
    size++;
  }
  return size;
}
