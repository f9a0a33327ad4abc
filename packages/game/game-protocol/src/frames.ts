import { create } from "@bufbuild/protobuf";
import { type Frame, FrameSchema, type InputAck, InputAckSchema, PipeGapSchema } from "@flaplab/contracts/engine/v1/stream_pb";

/**
 * What the encoder needs to know about a game's course, fixed for the whole game. Built from
 * the physics: `{ pipeSpacing: course.pipeSpacing, pipes: course.pipes, pipeWidth: PIPE_WIDTH,
 * pipesInView: state.pipesInView }`.
 */
export interface FrameCourse {
  /** Horizontal gap between one pipe's right edge and the next pipe's left edge, px. */
  readonly pipeSpacing: number;
  readonly pipes: readonly { readonly gapStart: number; readonly gapHeight: number }[];
  readonly pipeWidth: number;
  /** How many pipes a frame shows (the physics' `pipesInView`). */
  readonly pipesInView: number;
}

/**
 * The game state after a tick, as the encoder reads it. The physics `GameState` has this shape
 * (declared here so that this package does not depend on the physics at run time).
 */
export interface FrameSource {
  readonly tick: number;
  readonly phase: "ready" | "playing" | "over";
  readonly birdY: number;
  readonly score: number;
  /** Pipe speed after the tick, px/tick. */
  readonly pipeSpeed: number;
  /** World x at the viewport's left edge after the tick. */
  readonly pipeWindowX: number;
  /** Index of the first pipe in view. */
  readonly closestPipe: number;
  readonly courseEnd: boolean;
}

/** The game state right after an input was applied between ticks, as `FrameEncoder.ack` reads it. */
export interface AckSource {
  readonly tick: number;
  readonly phase: "ready" | "playing" | "over";
  readonly birdY: number;
  /** The bird's velocity after the input, px/tick, positive downwards. */
  readonly birdVelocity: number;
}

/**
 * Server side of the frame delta encoding: one encoder per game stream. The first frame is full;
 * each later one carries the tick and bird y, plus what changed (reflected seq, score, pipe speed)
 * and the pipes the client has not been sent. Frames must be encoded for consecutive ticks.
 * Between ticks, `ack` encodes an input-ack frame for an input the engine has just applied.
 */
export class FrameEncoder {
  private started = false;
  private lastTick = 0;
  private lastReflectedSeq = 0;
  private lastScore = 0;
  private lastSpeed = 0;
  /** Highest pipe index sent so far. */
  private lastPipe = -1;
  private over = false;

  constructor(private readonly course: FrameCourse) {
    if (!Number.isInteger(course.pipesInView) || course.pipesInView < 1) {
      throw new RangeError(`pipesInView must be a positive integer, got ${course.pipesInView}`);
    }
  }

  /** Whether the next frame will be the full one. */
  get isFirst(): boolean {
    return !this.started;
  }

  /**
   * The frame of `state`'s latest tick, echoing `reflectedSeq` (the last input whose effect is in
   * it). Throws when a tick was skipped or repeated, or after the game-over frame.
   */
  encode(state: FrameSource, reflectedSeq: number): Frame {
    const frame = create(FrameSchema, { tick: state.tick, birdY: state.birdY });
    const gameOver = state.phase === "over";
    if (!this.started) {
      frame.full = true;
      frame.score = state.score;
      frame.reflectedSeq = reflectedSeq;
      frame.pipeSpeed = state.pipeSpeed;
      frame.pipeWindowX = state.pipeWindowX;
      frame.pipeSpacing = this.course.pipeSpacing;
      frame.pipeWidth = this.course.pipeWidth;
      this.started = true;
    } else {
      if (this.over) throw new Error("the game-over frame was already encoded");
      if (state.tick !== this.lastTick + 1) {
        throw new Error(`frame for tick ${state.tick} after tick ${this.lastTick}: ticks must be consecutive`);
      }
      if (reflectedSeq !== this.lastReflectedSeq) frame.reflectedSeq = reflectedSeq;
      if (state.score !== this.lastScore) frame.score = state.score;
      if (!Object.is(state.pipeSpeed, this.lastSpeed)) frame.pipeSpeed = state.pipeSpeed;
    }
    const end = Math.min(state.closestPipe + this.course.pipesInView, this.course.pipes.length);
    for (let index = Math.max(state.closestPipe, this.lastPipe + 1); index < end; index++) {
      const gap = this.course.pipes[index] as { gapStart: number; gapHeight: number };
      frame.pipes.push(create(PipeGapSchema, { index, gapStart: gap.gapStart, gapHeight: gap.gapHeight }));
      this.lastPipe = index;
    }
    if (gameOver) frame.gameOver = true;
    if (state.courseEnd) frame.courseEnd = true;
    this.lastTick = state.tick;
    this.lastReflectedSeq = reflectedSeq;
    this.lastScore = state.score;
    this.lastSpeed = state.pipeSpeed;
    this.over = gameOver;
    return frame;
  }

  /**
   * The InputAck for input `seq`, which the engine has just applied to `state` between ticks: the
   * current tick, `bird_y` (unchanged by the input) and the bird's new velocity. The next tick
   * frame repeats `reflected_seq` only if it changed again. Undefined before the full frame: that
   * frame will reflect the input. Throws after the game-over frame, and when `state` is not at the
   * tick of the last frame.
   */
  ack(state: AckSource, seq: number): InputAck | undefined {
    if (!this.started) return undefined;
    if (this.over) throw new Error("the game-over frame was already encoded");
    if (state.tick !== this.lastTick) {
      throw new Error(`input ack at tick ${state.tick} after the frame of tick ${this.lastTick}: acks carry the current tick`);
    }
    this.lastReflectedSeq = seq;
    return create(InputAckSchema, { tick: state.tick, seq, birdY: state.birdY, birdVelocity: state.birdVelocity });
  }

  /**
   * As `encode`, written straight into `out` as the size-delimited `GameStreamMessage { frame }`
   * the engine sends, byte for byte what `encodeDelimited(GameStreamMessageSchema, …)` makes of
   * `encode`'s frame, without allocating. Returns the message's length (`out.length`).
   */
  writeFrame(state: FrameSource, reflectedSeq: number, out: FrameWriter): number {
    const gameOver = state.phase === "over";
    const first = !this.started;
    if (!first) {
      if (this.over) throw new Error("the game-over frame was already encoded");
      if (state.tick !== this.lastTick + 1) {
        throw new Error(`frame for tick ${state.tick} after tick ${this.lastTick}: ticks must be consecutive`);
      }
    }
    const from = Math.max(state.closestPipe, this.lastPipe + 1);
    const end = Math.min(state.closestPipe + this.course.pipesInView, this.course.pipes.length);
    out.begin(end > from ? end - from : 0);
    out.uint32(0x08, state.tick);
    out.implicitDouble(0x11, state.birdY);
    if (first || reflectedSeq !== this.lastReflectedSeq) out.uint32(0x18, reflectedSeq, true);
    if (first || state.score !== this.lastScore) out.int32(0x20, state.score);
    if (first || !Object.is(state.pipeSpeed, this.lastSpeed)) out.double(0x29, state.pipeSpeed);
    if (first) out.double(0x31, state.pipeWindowX);
    for (let index = from; index < end; index++) {
      const gap = this.course.pipes[index] as { gapStart: number; gapHeight: number };
      out.pipe(index, gap.gapStart, gap.gapHeight);
      this.lastPipe = index;
    }
    if (gameOver) out.bool(0x40);
    if (first) out.bool(0x48);
    if (state.courseEnd) out.bool(0x50);
    if (first) {
      out.double(0x59, this.course.pipeSpacing);
      out.double(0x61, this.course.pipeWidth);
    }
    this.started = true;
    this.lastTick = state.tick;
    this.lastReflectedSeq = reflectedSeq;
    this.lastScore = state.score;
    this.lastSpeed = state.pipeSpeed;
    this.over = gameOver;
    return out.finish();
  }

  /**
   * As `ack`, written straight into `out` as the size-delimited `GameStreamMessage { ack }` (see
   * `writeFrame`). Returns the message's length, or 0 (nothing written) before the full frame.
   */
  writeAck(state: AckSource, seq: number, out: FrameWriter): number {
    if (!this.started) return 0;
    if (this.over) throw new Error("the game-over frame was already encoded");
    if (state.tick !== this.lastTick) {
      throw new Error(`input ack at tick ${state.tick} after the frame of tick ${this.lastTick}: acks carry the current tick`);
    }
    this.lastReflectedSeq = seq;
    out.begin(0);
    out.uint32(0x08, state.tick);
    out.uint32(0x10, seq);
    out.implicitDouble(0x19, state.birdY);
    out.implicitDouble(0x21, state.birdVelocity);
    return out.finish(ACK);
  }
}

/** GameStreamMessage's `frame` and `ack` fields, length-delimited: the tag before a message body. */
const FRAME = 0x0a;
const ACK = 0x1a;
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

/** One pipe in view, as the client shows it (the physics' `PipeInView`). */
export interface ClientPipe {
  readonly index: number;
  /** Left edge in viewport px. */
  readonly x: number;
  readonly gapStart: number;
  readonly gapHeight: number;
}

/** What the client draws after a frame: the same numbers as the engine's view of that tick. */
export interface ClientView {
  readonly tick: number;
  readonly birdY: number;
  readonly score: number;
  /** The last input whose effect is in this frame (0 before any). */
  readonly reflectedSeq: number;
  readonly pipes: readonly ClientPipe[];
  readonly pipeWidth: number;
  readonly gameOver: boolean;
  readonly courseEnd: boolean;
  /**
   * The frame was an input ack: the engine applied input `reflectedSeq` during tick `tick`.
   * Nothing moved (same tick, bird y and pipes as the tick frame before); not a tick frame.
   */
  readonly ack: boolean;
  /** The bird's velocity after the acked input, px/tick. Ack views only. */
  readonly birdVelocity?: number;
}

export class FrameDecodeError extends Error {
  override readonly name = "FrameDecodeError";
}

interface DecoderState {
  tick: number;
  score: number;
  reflectedSeq: number;
  pipeSpeed: number;
  pipeWindowX: number;
  pipeSpacing: number;
  pipeWidth: number;
  /** Gaps by pipe index, from the first pipe in view to the highest sent. */
  gaps: Map<number, { gapStart: number; gapHeight: number }>;
  lastPipe: number;
  over: boolean;
}

/**
 * Client side of the frame delta encoding: rebuilds each tick's view from the frames, integrating
 * the pipe window exactly as the engine does, so pipe positions are bit-identical to the engine's.
 * Input acks (`applyAck`) update the reflected seq without advancing the tick. Throws FrameDecodeError on
 * a frame it cannot apply (a delta or ack before any full frame, a missing tick, an ack for another
 * tick, a frame after game over, a full frame without its fields).
 */
export class FrameDecoder {
  private state: DecoderState | undefined;

  /** The view after `frame`. A full frame resets the decoder. */
  apply(frame: Frame): ClientView {
    const s = frame.full ? this.reset(frame) : this.advance(frame);
    for (const p of frame.pipes) {
      s.gaps.set(p.index, { gapStart: p.gapStart, gapHeight: p.gapHeight });
      if (p.index > s.lastPipe) s.lastPipe = p.index;
    }
    if (frame.gameOver) s.over = true;
    return this.view(s, frame.birdY, frame.gameOver, frame.courseEnd);
  }

  /** The view after an input ack: the same tick, with the acked input reflected and the bird's new velocity. */
  applyAck(ack: InputAck): ClientView {
    const s = this.state;
    if (!s) throw new FrameDecodeError(`input ack for tick ${ack.tick} before any full frame`);
    if (s.over) throw new FrameDecodeError(`input ack for tick ${ack.tick} after the game-over frame`);
    if (ack.tick !== s.tick) {
      throw new FrameDecodeError(`input ack for tick ${ack.tick} during tick ${s.tick}: an ack carries the current tick`);
    }
    if (ack.seq === 0) throw new FrameDecodeError(`input ack for tick ${ack.tick} lacks its input's seq`);
    s.reflectedSeq = ack.seq;
    return { ...this.view(s, ack.birdY, false, false), ack: true, birdVelocity: ack.birdVelocity };
  }

  /** What the state shows with the bird at `birdY`. */
  private view(s: DecoderState, birdY: number, gameOver: boolean, courseEnd: boolean): ClientView {
    return {
      tick: s.tick,
      birdY,
      score: s.score,
      reflectedSeq: s.reflectedSeq,
      pipes: this.pipesInView(s),
      pipeWidth: s.pipeWidth,
      gameOver,
      courseEnd,
      ack: false,
    };
  }

  /** The pipes in view after the latest tick; forgets the gaps of pipes that have left it. */
  private pipesInView(s: DecoderState): ClientPipe[] {
    // The physics' closest pipe: the first whose right edge has not passed x = 0.
    const span = s.pipeWidth + s.pipeSpacing;
    const closest = Math.trunc(Math.max(0, Math.ceil((s.pipeWindowX - s.pipeWidth) / span)));
    for (const index of s.gaps.keys()) if (index < closest) s.gaps.delete(index);
    const pipes: ClientPipe[] = [];
    for (let index = closest; index <= s.lastPipe; index++) {
      const gap = s.gaps.get(index);
      if (!gap) throw new FrameDecodeError(`tick ${s.tick}: pipe ${index} is in view but was never sent`);
      pipes.push({ index, x: index * span - s.pipeWindowX, gapStart: gap.gapStart, gapHeight: gap.gapHeight });
    }
    return pipes;
  }

  private reset(frame: Frame): DecoderState {
    const missing = (["score", "pipeSpeed", "pipeWindowX", "pipeSpacing", "pipeWidth"] as const).filter(
      (f) => frame[f] === undefined,
    );
    if (missing.length > 0) {
      throw new FrameDecodeError(`full frame for tick ${frame.tick} lacks ${missing.join(", ")}`);
    }
    this.state = {
      tick: frame.tick,
      score: frame.score as number,
      reflectedSeq: frame.reflectedSeq ?? 0,
      pipeSpeed: frame.pipeSpeed as number,
      pipeWindowX: frame.pipeWindowX as number,
      pipeSpacing: frame.pipeSpacing as number,
      pipeWidth: frame.pipeWidth as number,
      gaps: new Map(),
      lastPipe: -1,
      over: false,
    };
    return this.state;
  }

  private advance(frame: Frame): DecoderState {
    const s = this.state;
    if (!s) throw new FrameDecodeError(`delta frame for tick ${frame.tick} before any full frame`);
    if (s.over) throw new FrameDecodeError(`frame for tick ${frame.tick} after the game-over frame`);
    if (frame.tick !== s.tick + 1) {
      throw new FrameDecodeError(`frame for tick ${frame.tick} after tick ${s.tick}: frames must be consecutive`);
    }
    s.tick = frame.tick;
    // As the engine's tick: the window moves by the speed before this tick's speed update.
    s.pipeWindowX += s.pipeSpeed;
    if (frame.pipeSpeed !== undefined) s.pipeSpeed = frame.pipeSpeed;
    if (frame.score !== undefined) s.score = frame.score;
    if (frame.reflectedSeq !== undefined) s.reflectedSeq = frame.reflectedSeq;
    return s;
  }
}
