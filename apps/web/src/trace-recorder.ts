import { serializeFlapLabTrace, type Trace } from "@flaplab/input-traces";
import { BIRD, VIEWPORT } from "./geometry.js";
import { roundMs } from "./latency-log.js";

interface RecordedInput {
  readonly seq: number;
  /** ms since the start input. */
  readonly t: number;
  /** Tick of the first frame that reflected this input. */
  tick?: number;
}

/**
 * Records one game as a FlapLab trace (`flaplab-trace/1`): the seed and every flap input's time
 * relative to the start input (t = 0), with the engine tick that first reflected it.
 */
export class TraceRecorder {
  private startTime: number | undefined;
  private readonly inputs: RecordedInput[] = [];
  private nextUnreflected = 0;

  constructor(
    readonly seed: bigint,
    private readonly source = "flaplab web client",
  ) {}

  /** The start input (seq 1) was sent at `time` (page clock, ms). */
  start(time: number): void {
    this.startTime = time;
  }

  /** A flap input was sent at `time`. Inputs before `start` are ignored. */
  input(seq: number, time: number): void {
    if (this.startTime === undefined) return;
    this.inputs.push({ seq, t: Math.max(0, roundMs(time - this.startTime)) });
  }

  /** A frame of `tick` reflected every input up to `reflectedSeq`. */
  reflected(reflectedSeq: number, tick: number): void {
    while (this.nextUnreflected < this.inputs.length) {
      const input = this.inputs[this.nextUnreflected]!;
      if (input.seq > reflectedSeq) break;
      input.tick = tick;
      this.nextUnreflected++;
    }
  }

  /** Flap inputs recorded so far (reflected or not). */
  get inputCount(): number {
    return this.inputs.length;
  }

  /**
   * The trace. Inputs no frame reflected (sent as the game ended) had no effect and are left out,
   * so every listed input carries its tick.
   */
  toTrace(recordedAt: Date = new Date()): Trace {
    const applied = this.inputs.filter((i) => i.tick !== undefined);
    return {
      format: "flaplab-json",
      seed: this.seed,
      viewport: { width: VIEWPORT.width, height: VIEWPORT.height },
      bird: { width: BIRD.width, height: BIRD.height },
      startMs: 0,
      flapOffsetsMs: applied.map((i) => i.t),
      recordedTicks: applied.map((i) => i.tick!),
      dropLastInput: false,
      recordedAt: recordedAt.toISOString(),
      source: this.source,
    };
  }

  toJson(recordedAt?: Date): string {
    return serializeFlapLabTrace(this.toTrace(recordedAt));
  }
}
