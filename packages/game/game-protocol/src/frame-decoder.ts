import type { Frame, InputAck } from "@flaplab/contracts/engine/v1/stream_pb";

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
