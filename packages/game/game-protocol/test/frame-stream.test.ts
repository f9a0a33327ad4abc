import { describe, expect, it } from "vitest";
import { EASY_FLAP_TICKS, FLAPPYGO_FRAME_BYTES, average, easyWorld, hardWorld, openCourse, playThroughStream } from "./frame-fixtures.js";

describe("frame delta encoding", () => {
  it("reproduces the physics view on every tick of the easy trace, in far fewer bytes", () => {
    const played = playThroughStream(easyWorld, EASY_FLAP_TICKS);
    expect(played.ticks).toBe(402);
    expect(played.score).toBe(7);
    expect(played.state.died).toBe(true);
    const avg = average(played.wireBytes);
    console.log(
      `easy trace: ${played.wireBytes.length} frames, ${played.wireBytes.reduce((a, b) => a + b, 0)} bytes, ` +
        `${avg.toFixed(2)} B/frame with the size prefix (first ${played.wireBytes[0]} B, max ${Math.max(...played.wireBytes)} B)`,
    );
    expect(avg).toBeLessThan(FLAPPYGO_FRAME_BYTES / 8);
    expect(played.ackBytes).toHaveLength(EASY_FLAP_TICKS.length);
    console.log(`easy trace: ${played.ackBytes.length} input acks, ${average(played.ackBytes).toFixed(2)} B/ack with the size prefix`);
  });

  it("reproduces a no-flap game on the hard seed (4 pipes in view)", () => {
    const played = playThroughStream(hardWorld, []);
    expect(played.ticks).toBe(34);
  });

  it("reproduces a game to the end of the course (speed ramp, every score, the short last frame)", () => {
    const played = playThroughStream(openCourse(30), []);
    expect(played.state.courseEnd).toBe(true);
    expect(played.score).toBe(26); // 30 pipes, 5 in view: the course ends when pipe 30 is needed
    expect(average(played.wireBytes)).toBeLessThan(20);
  });

  it("reproduces a course with fractional spacing and 4 pipes in view", () => {
    const played = playThroughStream(openCourse(12, 228.37), [3, 4, 90, 91, 92]);
    expect(played.state.pipesInView).toBe(4);
    expect(played.state.courseEnd).toBe(true);
    expect(played.ackBytes).toHaveLength(5);
  });

  it("acks no input before the full frame: the full frame reflects it", () => {
    const played = playThroughStream(openCourse(12), [1, 2]);
    expect(played.ackBytes).toHaveLength(1); // only the flap before tick 2
  });
});
