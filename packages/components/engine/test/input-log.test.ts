import { describe, expect, it } from "vitest";
import { InputLog } from "../src/input-log.js";

const seqs = (log: InputLog) => log.toArray().map((r) => r.seq);

describe("InputLog", () => {
  it("keeps records in arrival order with every field, growing past its first 16 slots", () => {
    const log = new InputLog(1000);
    for (let i = 1; i <= 40; i++) log.push(i, i + 0.5, 1000 + i, 10 + i, i === 1 ? "started" : i % 7 === 0 ? "ignored" : "flap");
    expect(log.length).toBe(40);
    expect(seqs(log)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(log.at(0)).toEqual({ seq: 1, clientTimeMs: 1.5, receivedAtMs: 1001, tick: 11, effect: "started" });
    expect(log.at(6)?.effect).toBe("ignored");
    expect(log.at(-1)).toEqual({ seq: 40, clientTimeMs: 40.5, receivedAtMs: 1040, tick: 50, effect: "flap" });
    expect(log.at(40)).toBeUndefined();
    expect(log.at(-41)).toBeUndefined();
    expect(log.at(1.5)).toBeUndefined();
  });

  it("drops the oldest beyond its capacity, also across a wrap and a later growth", () => {
    const log = new InputLog(20);
    for (let i = 1; i <= 55; i++) log.push(i, 0, 0, i, "flap");
    expect(log.length).toBe(20);
    expect(seqs(log)).toEqual(Array.from({ length: 20 }, (_, i) => i + 36));
    expect([...log].map((r) => r.tick)).toEqual(seqs(log));
  });

  it("keeps only the newest when its capacity is below its first 16 slots", () => {
    const log = new InputLog(3);
    for (let i = 1; i <= 5; i++) log.push(i, 0, 0, i, "flap");
    expect(seqs(log)).toEqual([3, 4, 5]);
  });

  it("with capacity 0 keeps nothing, and refuses a capacity that is not a whole number ≥ 0", () => {
    const log = new InputLog(0);
    log.push(1, 0, 0, 1, "started");
    expect(log.length).toBe(0);
    expect(log.toArray()).toEqual([]);
    expect(() => new InputLog(-1)).toThrow(/whole number ≥ 0/);
    expect(() => new InputLog(2.5)).toThrow(/whole number ≥ 0/);
  });
});
