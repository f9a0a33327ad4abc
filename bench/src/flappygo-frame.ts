// FlappyGo's per-tick frame, rebuilt from its message definition (no .proto needed):
// GenerateFrameReq { string game_id = 1; Pos bird_position = 2 { double x = 1; double y = 2; };
//   repeated double pipe_positions = 3; repeated double pipe_starts = 4; repeated double pipe_gaps = 5;
//   int32 score = 6; int32 pipe_width = 7; bool game_over = 8; }
// proto3: scalars at their default are omitted, repeated doubles are packed; sent size-delimited.
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { BIRD_X, type FrameView, PIPE_WIDTH } from "@flaplab/physics";

export interface FlappyGoFrame {
  readonly gameId: string;
  readonly birdX: number;
  readonly birdY: number;
  readonly pipePositions: readonly number[];
  readonly pipeStarts: readonly number[];
  readonly pipeGaps: readonly number[];
  readonly score: number;
  readonly pipeWidth: number;
  readonly gameOver: boolean;
}

/** A FlappyGo game id: a UUID string (36 ASCII characters). */
export const FLAPPYGO_GAME_ID = "6b1f7c8e-2a4d-4c3b-9e5f-0a1b2c3d4e5f";

/** proto3 implicit presence: a double is written unless it is +0. */
const present = (v: number) => !Object.is(v, 0);

function packedDoubles(w: BinaryWriter, field: number, values: readonly number[]): void {
  if (values.length === 0) return;
  w.tag(field, WireType.LengthDelimited).fork();
  for (const v of values) w.double(v);
  w.join();
}

/** The message bytes of one FlappyGo frame (no size prefix). */
export function encodeFlappyGoFrame(f: FlappyGoFrame): Uint8Array {
  const w = new BinaryWriter();
  if (f.gameId !== "") w.tag(1, WireType.LengthDelimited).string(f.gameId);
  // bird_position is a message field: always written (Go sets it every tick), its scalars only when non-zero.
  w.tag(2, WireType.LengthDelimited).fork();
  if (present(f.birdX)) w.tag(1, WireType.Bit64).double(f.birdX);
  if (present(f.birdY)) w.tag(2, WireType.Bit64).double(f.birdY);
  w.join();
  packedDoubles(w, 3, f.pipePositions);
  packedDoubles(w, 4, f.pipeStarts);
  packedDoubles(w, 5, f.pipeGaps);
  if (f.score !== 0) w.tag(6, WireType.Varint).int32(f.score);
  if (f.pipeWidth !== 0) w.tag(7, WireType.Varint).int32(f.pipeWidth);
  if (f.gameOver) w.tag(8, WireType.Varint).bool(true);
  return w.finish();
}

/** `body` with its length as an unsigned LEB128 varint in front, as FlappyGo's streams send it. */
export function sizeDelimited(body: Uint8Array): Uint8Array {
  const w = new BinaryWriter();
  w.uint32(body.length).raw(body);
  return w.finish();
}

/** FlappyGo's frame for a physics view: `pipesInView` pipes, bird at x = 50, pipe width 72. */
export function flappyGoFrameOf(view: FrameView, gameId: string = FLAPPYGO_GAME_ID): FlappyGoFrame {
  return {
    gameId,
    birdX: BIRD_X,
    birdY: view.birdY,
    pipePositions: view.pipes.map((p) => p.x),
    pipeStarts: view.pipes.map((p) => p.gapStart),
    pipeGaps: view.pipes.map((p) => p.gapHeight),
    score: view.score,
    pipeWidth: PIPE_WIDTH,
    gameOver: view.gameOver,
  };
}
