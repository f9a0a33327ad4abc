/**
 * Where a game stream stands, one value at a time. A stream starts `live`; the open phases take
 * inputs and ticks (`handing-over` takes neither); the closed phases (`moved`, `abandoned`,
 * `finished`) take nothing and end there.
 *
 * - `live`: the stream plays its game (waiting for the start press, or ticking).
 * - `awaiting-resend`: continued here (moved, or resumed): it ticks, and the client's first
 *   message (its re-sent presses) restarts the tick clock.
 * - `draining`: the engine drains; the game moves right after its next tick.
 * - `handing-over`: frozen for a move: no ticks or inputs while its snapshot is stored.
 * - `over`: the game-over tick ran; the run is being recorded, the summary follows.
 * - `moved`: the game continues on another engine (told `Moved`, or taken over there).
 * - `abandoned`: the stream closed before game over; the game left this engine.
 * - `finished`: the stream closed after game over.
 */
export type StreamPhase = "live" | "awaiting-resend" | "draining" | "handing-over" | "over" | "moved" | "abandoned" | "finished";

/** Every phase, in the order a stream may go through them. */
export const STREAM_PHASES: readonly StreamPhase[] = ["live", "awaiting-resend", "draining", "handing-over", "over", "moved", "abandoned", "finished"];

/** The phases each phase may go to; a closed phase goes nowhere. */
export const STREAM_TRANSITIONS: Readonly<Record<StreamPhase, readonly StreamPhase[]>> = {
  live: ["awaiting-resend", "draining", "handing-over", "over", "moved", "abandoned"],
  "awaiting-resend": ["live", "draining", "handing-over", "over", "moved", "abandoned"],
  draining: ["handing-over", "over", "moved", "abandoned"],
  "handing-over": ["moved", "abandoned"],
  over: ["moved", "finished"],
  moved: [],
  abandoned: [],
  finished: [],
};

/** `from` may go to `to`. */
export function canTransition(from: StreamPhase, to: StreamPhase): boolean {
  return STREAM_TRANSITIONS[from].includes(to);
}

/** The session is closed (or closing): nothing more is read, ticked or sent for the game. */
export function isClosedPhase(phase: StreamPhase): boolean {
  return phase === "moved" || phase === "abandoned" || phase === "finished";
}

/** The phase a stream in `phase` ends in when its session closes: `finished` after game over, else `abandoned`. */
export function closedPhaseOf(phase: StreamPhase): StreamPhase {
  if (isClosedPhase(phase)) return phase;
  return phase === "over" ? "finished" : "abandoned";
}

/** A transition the table does not allow, as reported (logged as an internal error). */
export interface RefusedTransition {
  readonly from: StreamPhase;
  readonly to: StreamPhase;
}

/**
 * A stream's phase and its one way of changing: `transition(to)` goes to `to` when the table
 * allows it, and otherwise reports the refusal (`refused`) and leaves the phase as it was: a bug
 * shows in the logs, it never throws into the server. A game stream is one (its phase lives in
 * its own object: it is read at every tick).
 */
export class StreamPhaseMachine {
  private current: StreamPhase = "live";

  /** Where the stream stands now. */
  get phase(): StreamPhase {
    return this.current;
  }

  /** Goes to `to`; false (the phase unchanged, the refusal reported) when `to` is not allowed from here. */
  transition(to: StreamPhase): boolean {
    const from = this.current;
    if (!canTransition(from, to)) {
      this.refused({ from, to });
      return false;
    }
    this.current = to;
    return true;
  }

  /** A transition the table does not allow was asked for (a subclass logs it). */
  protected refused(_refused: RefusedTransition): void {}
}
