import { describe, expect, it } from "vitest";
import {
  type RefusedTransition,
  STREAM_PHASES,
  STREAM_TRANSITIONS,
  type StreamPhase,
  StreamPhaseMachine,
  canTransition,
  closedPhaseOf,
  isClosedPhase,
} from "../src/stream-phase.js";

/** A machine that records what it refused. */
class RecordingMachine extends StreamPhaseMachine {
  readonly refusals: RefusedTransition[] = [];
  protected override refused(refused: RefusedTransition): void {
    this.refusals.push(refused);
  }
}

/** A machine standing in `phase`, reached through allowed transitions only. */
function machineIn(phase: StreamPhase): RecordingMachine {
  const machine = new RecordingMachine();
  const path: Record<StreamPhase, readonly StreamPhase[]> = {
    live: [],
    "awaiting-resend": ["awaiting-resend"],
    draining: ["draining"],
    "handing-over": ["handing-over"],
    over: ["over"],
    moved: ["moved"],
    abandoned: ["abandoned"],
    finished: ["over", "finished"],
  };
  for (const step of path[phase]) expect(machine.transition(step)).toBe(true);
  expect(machine.phase).toBe(phase);
  return machine;
}

describe("stream phases", () => {
  it("start live", () => {
    expect(new StreamPhaseMachine().phase).toBe("live");
  });

  it("take every transition the table allows", () => {
    let taken = 0;
    for (const from of STREAM_PHASES) {
      for (const to of STREAM_TRANSITIONS[from]) {
        const machine = machineIn(from);
        expect(machine.transition(to), `${from} → ${to}`).toBe(true);
        expect(machine.phase).toBe(to);
        expect(machine.refusals).toEqual([]);
        taken++;
      }
    }
    expect(taken).toBe(20);
  });

  it("refuse every other transition: reported, the phase unchanged", () => {
    let refused = 0;
    for (const from of STREAM_PHASES) {
      for (const to of STREAM_PHASES) {
        if (canTransition(from, to)) continue;
        const machine = machineIn(from);
        expect(machine.transition(to), `${from} → ${to}`).toBe(false);
        expect(machine.phase).toBe(from);
        expect(machine.refusals).toEqual([{ from, to }]);
        refused++;
      }
    }
    expect(refused).toBe(STREAM_PHASES.length ** 2 - 20);
  });

  it("end in a closed phase, which goes nowhere", () => {
    for (const phase of ["moved", "abandoned", "finished"] as const) {
      expect(isClosedPhase(phase)).toBe(true);
      expect(STREAM_TRANSITIONS[phase]).toEqual([]);
    }
    for (const phase of ["live", "awaiting-resend", "draining", "handing-over", "over"] as const) expect(isClosedPhase(phase)).toBe(false);
  });

  it("close as finished after game over and as abandoned before it", () => {
    expect(closedPhaseOf("over")).toBe("finished");
    for (const phase of ["live", "awaiting-resend", "draining", "handing-over"] as const) {
      expect(closedPhaseOf(phase)).toBe("abandoned");
      expect(canTransition(phase, "abandoned")).toBe(true);
    }
    expect(canTransition("over", "finished")).toBe(true);
    for (const phase of ["moved", "abandoned", "finished"] as const) expect(closedPhaseOf(phase)).toBe(phase);
  });

  it("never hand over a game that is over, nor resume waiting once a move began", () => {
    expect(canTransition("over", "handing-over")).toBe(false);
    expect(canTransition("over", "draining")).toBe(false);
    expect(canTransition("handing-over", "live")).toBe(false);
    expect(canTransition("draining", "awaiting-resend")).toBe(false);
    expect(canTransition("handing-over", "over")).toBe(false);
  });
});
