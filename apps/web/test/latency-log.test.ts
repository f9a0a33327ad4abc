import { describe, expect, it } from "vitest";
import {
  CSV_COLUMNS,
  inputToAudioDelays,
  inputToEffectDelays,
  inputToNextFrameDelays,
  LatencyLog,
  median,
  rowsToCsv,
  summarize,
  type LatencyRow,
} from "../src/latency-log.js";

describe("median", () => {
  it("takes the middle value, or the mean of the middle two", () => {
    expect(median([])).toBeNull();
    expect(median([7])).toBe(7);
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe("CSV export", () => {
  it("starts with FlappyGo's columns, then FlapLab's, one line per row in log order", () => {
    let clock = 1000.12345;
    const log = new LatencyLog(() => clock);
    log.rtt("auth", 10, 4.56789, "login");
    log.input(1);
    clock = 1040.5;
    log.frame(1, 1, 15);
    clock = 1041.75;
    log.ack(1, 2, 28);
    clock = 1050.25;
    log.audio(2, 3, "flap", 2048);
    log.error('cannot play "die", really', { sound: "die" });
    const lines = log.csv().split("\n");
    expect(lines[0]).toBe("type,direction,time,seq,tick,reflected_seq,bytes,sound,ms,note,kind");
    expect(CSV_COLUMNS.slice(0, 3)).toEqual(["type", "direction", "time"]);
    expect(lines.slice(1)).toEqual([
      "auth,rtt,10.000,,,,,,4.568,login,",
      "input,send,1000.123,1,,,,,,,",
      "frame,recv,1040.500,,1,1,15,,,,tick",
      "frame,recv,1041.750,,1,2,28,,,,ack",
      "audio,recv,1050.250,2,3,,2048,flap,,,",
      'error,local,1050.250,,,,,die,,"cannot play ""die"", really",',
      "",
    ]);
    // Every data line has as many fields as the header (the quoted note holds a comma).
    for (const line of lines.slice(1, 6)) expect(line.split(",")).toHaveLength(CSV_COLUMNS.length);
  });

  it("keeps times to 3 decimals (µs)", () => {
    const csv = rowsToCsv([{ type: "input", direction: "send", time: 12.3456789, seq: 1 }]);
    expect(csv.split("\n")[1]).toBe("input,send,12.346,1,,,,,,,");
    const log = new LatencyLog(() => 5.0004999);
    expect(log.input(1).time).toBe(5);
  });
});

describe("summary", () => {
  // Inputs 1–4 sent at 100, 200, 300, 400. Frames every 33 ms carrying reflected_seq.
  const rows: LatencyRow[] = [
    { type: "auth", direction: "rtt", time: 1, ms: 12 },
    { type: "start", direction: "rtt", time: 50, ms: 8.5 },
    { type: "input", direction: "send", time: 100, seq: 1 },
    { type: "frame", direction: "recv", time: 140, tick: 1, reflectedSeq: 1, bytes: 60 },
    { type: "frame", direction: "recv", time: 173, tick: 2, reflectedSeq: 1, bytes: 12 },
    { type: "input", direction: "send", time: 200, seq: 2 },
    { type: "frame", direction: "recv", time: 206, tick: 3, reflectedSeq: 1, bytes: 12 },
    { type: "frame", direction: "recv", time: 239, tick: 4, reflectedSeq: 2, bytes: 14 },
    { type: "audio", direction: "recv", time: 250, seq: 2, tick: 4, sound: "flap", bytes: 3000 },
    { type: "input", direction: "send", time: 300, seq: 3 },
    { type: "input", direction: "send", time: 310, seq: 4 },
    // One frame reflects both 3 and 4.
    { type: "frame", direction: "recv", time: 338, tick: 7, reflectedSeq: 4, bytes: 2000 },
    { type: "audio", direction: "recv", time: 345, seq: 3, tick: 7, sound: "flap", bytes: 3000 },
    { type: "audio", direction: "recv", time: 360, seq: 0, tick: 7, sound: "point", bytes: 3000 },
    // A frame for an input never sent does not count; input 5 is never reflected.
    { type: "input", direction: "send", time: 400, seq: 5 },
  ];

  it("input-to-effect: first frame whose reflected_seq ≥ seq, minus the send time", () => {
    expect(inputToEffectDelays(rows)).toEqual([40, 39, 38, 28]);
  });

  it("input-to-audio: the clip carrying the input's seq, minus the send time", () => {
    expect(inputToAudioDelays(rows)).toEqual([50, 45]);
  });

  it("input-to-next-frame: the first tick frame after the send, whatever it reflects", () => {
    expect(inputToNextFrameDelays(rows)).toEqual([40, 6, 38, 28]);
  });

  it("summarizes frames, bytes and medians", () => {
    const s = summarize(rows);
    expect(s.framesReceived).toBe(5);
    expect(s.acksReceived).toBe(0);
    expect(s.inputToNextFrameMedianMs).toBe(33);
    expect(s.inputToNextFrameCount).toBe(4);
    expect(s.frameBytesMean).toBeCloseTo((60 + 12 + 12 + 14 + 2000) / 5, 6);
    expect(s.framesUnder1kbShare).toBe(4 / 5);
    expect(s.inputsSent).toBe(5);
    expect(s.inputToEffectMedianMs).toBe(38.5);
    expect(s.inputToEffectCount).toBe(4);
    expect(s.inputToAudioMedianMs).toBe(47.5);
    expect(s.inputToAudioCount).toBe(2);
    expect(s.audioReceived).toBe(3);
    expect(s.authMs).toBe(12);
    expect(s.startMs).toBe(8.5);
  });

  it("is empty-safe", () => {
    const s = summarize([]);
    expect(s).toMatchObject({
      framesReceived: 0,
      frameBytesMean: null,
      framesUnder1kbShare: null,
      acksReceived: 0,
      inputToEffectMedianMs: null,
      inputToNextFrameMedianMs: null,
      inputToNextFrameCount: 0,
      inputToAudioMedianMs: null,
      authMs: null,
      startMs: null,
    });
  });

  describe("with input acks", () => {
    // Flaps 2, 3 and 4 are acked within 1–2 ms; the tick frames come every 33 ms.
    const acked: LatencyRow[] = [
      { type: "input", direction: "send", time: 100, seq: 1 },
      { type: "frame", direction: "recv", time: 140, tick: 1, reflectedSeq: 1, bytes: 60, kind: "tick" },
      { type: "frame", direction: "recv", time: 173, tick: 2, reflectedSeq: 1, bytes: 14, kind: "tick" },
      { type: "input", direction: "send", time: 180, seq: 2 },
      { type: "frame", direction: "recv", time: 181.5, tick: 2, reflectedSeq: 2, bytes: 27, kind: "ack" },
      { type: "audio", direction: "recv", time: 190, seq: 2, tick: 3, sound: "flap", bytes: 3000 },
      { type: "frame", direction: "recv", time: 206, tick: 3, reflectedSeq: 2, bytes: 14, kind: "tick" },
      { type: "input", direction: "send", time: 210, seq: 3 },
      { type: "frame", direction: "recv", time: 211.2, tick: 3, reflectedSeq: 3, bytes: 27, kind: "ack" },
      { type: "input", direction: "send", time: 212, seq: 4 },
      { type: "frame", direction: "recv", time: 213, tick: 3, reflectedSeq: 4, bytes: 27, kind: "ack" },
      { type: "audio", direction: "recv", time: 225, seq: 3, tick: 4, sound: "flap", bytes: 3000 },
      { type: "frame", direction: "recv", time: 239, tick: 4, reflectedSeq: 4, bytes: 16, kind: "tick" },
    ];

    it("input-to-effect counts the ack: the first frame of either kind that reflects the input", () => {
      expect(inputToEffectDelays(acked)).toEqual([40, 1.5, 1.2, 1]);
    });

    it("input-to-next-frame counts tick frames only", () => {
      expect(inputToNextFrameDelays(acked)).toEqual([40, 26, 29, 27]);
    });

    it("counts tick frames and acks apart; bytes per frame are over tick frames", () => {
      const s = summarize(acked);
      expect(s.framesReceived).toBe(4);
      expect(s.acksReceived).toBe(3);
      expect(s.frameBytesMean).toBe((60 + 14 + 14 + 16) / 4);
      expect(s.framesUnder1kbShare).toBe(1);
      expect(s.inputToEffectMedianMs).toBe(1.35);
      expect(s.inputToEffectCount).toBe(4);
      expect(s.inputToNextFrameMedianMs).toBe(28);
      expect(s.inputToNextFrameCount).toBe(4);
      expect(s.inputToAudioMedianMs).toBe(12.5);
      expect(s.inputToAudioCount).toBe(2);
    });
  });

  it("input-to-next-frame takes the first tick frame strictly after the send, as FlappyGo's bisect_right", () => {
    const same: LatencyRow[] = [
      { type: "input", direction: "send", time: 50, seq: 1 },
      { type: "frame", direction: "recv", time: 50, tick: 1, reflectedSeq: 0, kind: "tick" },
      { type: "frame", direction: "recv", time: 60, tick: 1, reflectedSeq: 1, kind: "ack" },
      { type: "frame", direction: "recv", time: 83, tick: 2, reflectedSeq: 1 }, // no kind: a tick frame
    ];
    expect(inputToNextFrameDelays(same)).toEqual([33]);
  });

  it("ignores a frame received before the input was sent", () => {
    const early: LatencyRow[] = [
      { type: "frame", direction: "recv", time: 10, tick: 1, reflectedSeq: 3 },
      { type: "input", direction: "send", time: 20, seq: 3 },
      { type: "frame", direction: "recv", time: 45, tick: 2, reflectedSeq: 3 },
    ];
    expect(inputToEffectDelays(early)).toEqual([25]);
  });
});
