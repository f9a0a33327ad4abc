// The one place the client reaches the frame delta decoder of @flaplab/game-protocol.
import { FrameDecoder, FrameDecodeError, type ClientView } from "@flaplab/game-protocol";
import type { Frame, InputAck } from "@flaplab/contracts/engine/v1/stream_pb";

export type { ClientView, ClientPipe } from "@flaplab/game-protocol";
export { FrameDecodeError };

/** Rebuilds each tick's view (bird, score, pipes in viewport px) from the delta-encoded frames. */
export interface ViewDecoder {
  apply(frame: Frame): ClientView;
  /** An input the engine applied between ticks: the same tick, the input reflected. */
  applyAck(ack: InputAck): ClientView;
}

export function createViewDecoder(): ViewDecoder {
  return new FrameDecoder();
}
