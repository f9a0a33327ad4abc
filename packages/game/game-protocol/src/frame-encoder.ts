import { create } from "@bufbuild/protobuf";
import { type Frame, FrameSchema, type InputAck, InputAckSchema, PipeGapSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { ACK, type FrameWriter } from "./frame-writer.js";

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
