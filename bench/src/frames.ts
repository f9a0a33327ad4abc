// Section 4: bytes per frame over the easy trace, FlapLab's delta frames vs FlappyGo's full frames.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { GameStreamMessageSchema, type Frame } from "@flaplab/contracts/engine/v1/stream_pb";
import { encodeDelimited, FrameEncoder } from "@flaplab/game-protocol";
import { applyInputInPlace, createGame, PIPE_WIDTH, tickInPlace, viewOf } from "@flaplab/physics";
import { parseTrace, replayFlapTicks } from "@flaplab/input-traces";
import { courseFor } from "@flaplab/simulator";
import { repoDir } from "./child.js";
import { encodeFlappyGoFrame, flappyGoFrameOf, sizeDelimited } from "./flappygo-frame.js";
import type { RunOptions, SectionResult } from "./section.js";
import { count, ratio, sig } from "./table.js";

export const EASY_TRACE = "replay/traces/6977347407732442987.csv";
export const FRAME_BYTES_GOAL = 0.1;

export interface FrameBytes {
  readonly messages: number;
  readonly bytes: number;
}

export interface FrameBytesResult {
  readonly seed: string;
  readonly ticks: number;
  readonly score: number;
  readonly pipesInView: number;
  readonly flaplabFrames: FrameBytes;
  readonly flaplabAcks: FrameBytes;
  readonly flappygoFrames: FrameBytes;
}

/**
 * Plays the easy trace by tick index as the engine does (start press, then each flap applied
 * between ticks and acknowledged, a frame per tick) and counts the size-delimited bytes of
 * FlapLab's tick frames, its acks, and FlappyGo's frame for the same ticks.
 */
export async function measureFrameBytes(): Promise<FrameBytesResult> {
  const path = join(repoDir(), EASY_TRACE);
  const trace = parseTrace(await readFile(path, "utf8"), { fileName: "6977347407732442987.csv" });
  const seed = trace.seed!;
  const flaps = replayFlapTicks(trace);
  const state = createGame(courseFor(seed));
  const encoder = new FrameEncoder({ pipeSpacing: state.course.pipeSpacing, pipes: state.course.pipes, pipeWidth: PIPE_WIDTH, pipesInView: state.pipesInView });
  const message = (frame: Frame) => encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "frame", value: frame } }));
  let seq = 1;
  applyInputInPlace(state); // seq 1 starts the game
  const frames = { messages: 0, bytes: 0 };
  const acks = { messages: 0, bytes: 0 };
  const go = { messages: 0, bytes: 0 };
  let next = 0;
  while (state.phase === "playing") {
    const tick = state.tick + 1;
    while (next < flaps.length && flaps[next]! <= tick) {
      if (flaps[next] === tick) {
        seq++;
        applyInputInPlace(state);
        const ack = encoder.ack(state, seq);
        if (ack) {
          acks.messages++;
          acks.bytes += encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "ack", value: ack } })).byteLength;
        }
      }
      next++;
    }
    tickInPlace(state);
    frames.messages++;
    frames.bytes += message(encoder.encode(state, seq)).byteLength;
    go.messages++;
    go.bytes += sizeDelimited(encodeFlappyGoFrame(flappyGoFrameOf(viewOf(state)))).byteLength;
  }
  return { seed: seed.toString(), ticks: state.tick, score: state.score, pipesInView: state.pipesInView, flaplabFrames: frames, flaplabAcks: acks, flappygoFrames: go };
}

export async function runFrames(_opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const r = await measureFrameBytes();
  const avg = (b: FrameBytes) => (b.messages > 0 ? b.bytes / b.messages : null);
  const goAvg = avg(r.flappygoFrames);
  const frameAvg = avg(r.flaplabFrames);
  const met = frameAvg !== null && goAvg !== null && frameAvg <= FRAME_BYTES_GOAL * goAvg;
  const all = { messages: r.flaplabFrames.messages + r.flaplabAcks.messages, bytes: r.flaplabFrames.bytes + r.flaplabAcks.bytes };
  const row = (name: string, b: FrameBytes, goal: string, status: string) => [name, count(b.messages), count(b.bytes), sig(avg(b)), ratio(avg(b), goAvg), goal, status];
  return {
    id: "frames",
    title: "4. Frame bytes over the easy trace (size-delimited, prefix included)",
    table: {
      headers: ["Encoding", "Messages", "Bytes", "Avg B/message", "÷ FlappyGo frame", "Goal", "Met"],
      align: ["l", "r", "r", "r", "r", "l", "l"],
      rows: [
        row("FlapLab tick frames (delta)", r.flaplabFrames, `≤ ${FRAME_BYTES_GOAL}× FlappyGo`, met ? "met" : "missed"),
        row("FlapLab input acks", r.flaplabAcks, "", ""),
        row("FlapLab tick frames + acks", all, "", ""),
        row("FlappyGo GenerateFrameReq", r.flappygoFrames, "", ""),
      ],
    },
    notes: [
      `Seed ${r.seed}: the trace replayed by tick index ends at tick ${r.ticks} with score ${r.score}; ${r.pipesInView} pipes in view.`,
      `FlapLab: FrameEncoder + encodeDelimited(GameStreamMessage), as the engine sends them. FlappyGo: its GenerateFrameReq written with BinaryWriter (UUID game id, bird x = 50, ${r.pipesInView} packed pipe positions/starts/gaps, score, pipe width 72, game_over), size-delimited.`,
    ],
    goals: [{ section: "4", goal: `tick frame ≤ ${FRAME_BYTES_GOAL}× FlappyGo's bytes`, measured: `${sig(frameAvg)} B vs ${sig(goAvg)} B (${ratio(frameAvg, goAvg)})`, met }],
    data: r,
    seconds: (performance.now() - started) / 1000,
  };
}
