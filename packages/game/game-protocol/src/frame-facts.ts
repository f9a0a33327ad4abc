// The few facts of a tick frame a client that only counts frames needs (tick, score, the
// reflected input, the flags), read straight from the message's bytes: no message object, no
// array, nothing allocated per frame. A client that draws the frames uses FrameDecoder instead.

/** The running facts after a tick frame; a delta frame's absent score and seq carry over. */
export interface TickFacts {
  readonly tick: number;
  readonly score: number;
  /** The last input whose effect is in this frame (0 before any). */
  readonly reflectedSeq: number;
  readonly full: boolean;
  readonly gameOver: boolean;
  readonly courseEnd: boolean;
}

/** `GameStreamMessage.frame` (field 1, length-delimited): the tag byte a tick frame's message starts with. */
const FRAME_TAG = (1 << 3) | 2;
/** Frame's field numbers (proto/flaplab/engine/v1/stream.proto) that carry the facts. */
const TICK = 1;
const REFLECTED_SEQ = 3;
const SCORE = 4;
const GAME_OVER = 8;
const FULL = 9;
const COURSE_END = 10;

export class FrameFactsReader {
  /** The facts after the last frame read (one object, rewritten by each `read`). */
  readonly facts = { tick: 0, score: 0, reflectedSeq: 0, full: false, gameOver: false, courseEnd: false };
  private at = 0;

  /**
   * An input ack arrived (read with the library): the next tick frame repeats its seq only if it
   * changed since, so the running seq moves here.
   */
  acked(seq: number): void {
    this.facts.reflectedSeq = seq;
  }

  /**
   * Reads the size-delimited body of one `GameStreamMessage` at `bytes[start, end)`. True when it
   * is a tick frame (its facts are now in `facts`); false for any other message, and for bytes it
   * cannot read, which the caller decodes with the library (to answer them with its error).
   */
  read(bytes: Uint8Array, start: number, end: number): boolean {
    this.at = start;
    if (end - start < 2 || bytes[start] !== FRAME_TAG) return false;
    this.at++;
    const length = this.varint(bytes, end);
    if (length < 0 || this.at + length !== end) return false;
    let tick = 0;
    let score: number | undefined;
    let seq: number | undefined;
    let full = false;
    let gameOver = false;
    let courseEnd = false;
    while (this.at < end) {
      const key = this.varint(bytes, end);
      if (key < 0) return false;
      const wireType = key & 7;
      if (wireType === 0) {
        const value = this.varint(bytes, end);
        if (value < 0) return false;
        switch (key >>> 3) {
          case TICK:
            tick = value;
            break;
          case REFLECTED_SEQ:
            seq = value;
            break;
          case SCORE:
            score = value | 0; // an int32: the low 32 bits of its varint
            break;
          case GAME_OVER:
            gameOver = value !== 0;
            break;
          case FULL:
            full = value !== 0;
            break;
          case COURSE_END:
            courseEnd = value !== 0;
            break;
        }
      } else if (wireType === 1) this.at += 8;
      else if (wireType === 5) this.at += 4;
      else if (wireType === 2) {
        const skip = this.varint(bytes, end);
        if (skip < 0) return false;
        this.at += skip;
      } else return false;
    }
    if (this.at !== end) return false;
    const f = this.facts;
    f.tick = tick;
    // A full frame starts over; a delta frame carries only what changed.
    if (score !== undefined) f.score = score;
    else if (full) f.score = 0;
    if (seq !== undefined) f.reflectedSeq = seq;
    else if (full) f.reflectedSeq = 0;
    f.full = full;
    f.gameOver = gameOver;
    f.courseEnd = courseEnd;
    return true;
  }

  /** The low 32 bits (unsigned) of the varint at `at`, which moves past it; -1 when it runs past `end` or over 10 bytes. */
  private varint(bytes: Uint8Array, end: number): number {
    let value = 0;
    let factor = 1;
    for (let i = 0; i < 10; i++) {
      if (this.at >= end) return -1;
      const b = bytes[this.at++]!;
      if (i < 5) value += (b & 0x7f) * factor;
      factor *= 128;
      if ((b & 0x80) === 0) return value % 2 ** 32;
    }
    return -1;
  }
}
