// The player's inputs: sequence numbers, their bytes on the stream, and the recent ones kept to
// send again where a game continues after a move or a resume.
import { create } from "@bufbuild/protobuf";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { encodeDelimited } from "@flaplab/game-protocol";

/** Inputs kept to send again (only the ones a continued game has not reflected are ever needed). */
const KEPT_INPUTS = 64;

/** A size-delimited `ClientInput { seq, client_time_ms }`. */
export function encodeInput(seq: number, clientTimeMs: number): Uint8Array {
  return encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs }));
}

export class InputLog {
  private seq = 0;
  private readonly kept = new Map<number, Uint8Array>();

  /** The last seq handed out (0 before the start input). */
  get last(): number {
    return this.seq;
  }

  /** The next input: its seq (1 is the start input) and bytes, kept for a later resend. */
  next(clientTimeMs: number): { seq: number; bytes: Uint8Array } {
    const seq = ++this.seq;
    const bytes = encodeInput(seq, clientTimeMs);
    this.kept.set(seq, bytes);
    if (this.kept.size > KEPT_INPUTS) this.kept.delete(this.kept.keys().next().value!);
    return { seq, bytes };
  }

  /**
   * What to send where the game continues: every kept input after `reflected`, in order, in one
   * chunk; the latest input when there is none. `resent` counts the inputs after `reflected`.
   */
  resendAfter(reflected: number): { bytes: Uint8Array | undefined; resent: number } {
    const seqs = [...this.kept.keys()].filter((q) => q > reflected).sort((a, b) => a - b);
    const resent = seqs.length;
    if (seqs.length === 0 && this.seq > 0) seqs.push(this.seq);
    const chunks = seqs.flatMap((q) => this.kept.get(q) ?? []);
    if (chunks.length === 0) return { bytes: undefined, resent };
    const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    return { bytes: all, resent };
  }
}
