import { describe, expect, it } from "vitest";
import { AdoptedSessions, type ServedSession, ShardSessions } from "../src/sessions.js";

/** Whether `p` has settled once the microtasks queued now have run. */
async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  return settled;
}

/** A session that records the closes asked of it and closes on the first. */
function servedSession(): ServedSession & { readonly closes: Array<[number, string]> } {
  const closes: Array<[number, string]> = [];
  let end!: () => void;
  const closed = new Promise<void>((r) => (end = r));
  return {
    closes,
    closed,
    close(code, reason) {
      closes.push([code, reason]);
      end();
    },
  };
}

describe("ShardSessions (the group's side)", () => {
  it("holds a handed session until the shard reports it closed, and asks the shard to close it meanwhile", async () => {
    const asked: Array<[number, number, string]> = [];
    const sessions = new ShardSessions((id, code, reason) => asked.push([id, code, reason]));
    const a = sessions.add(1);
    const b = sessions.add(2);
    expect(sessions.size).toBe(2);
    a.close(4430, "replaced");
    expect(asked).toEqual([[1, 4430, "replaced"]]);
    // Asked, not closed: only the shard's report releases it.
    expect(await isSettled(a.closed)).toBe(false);
    expect(sessions.closed(1)).toBe(true);
    expect(await isSettled(a.closed)).toBe(true);
    expect(await isSettled(b.closed)).toBe(false);
    expect(sessions.size).toBe(1);
    // Once released, neither a second report nor a close reaches anything.
    expect(sessions.closed(1)).toBe(false);
    a.close(4500, "late");
    expect(asked).toHaveLength(1);
  });

  it("releases every session of a shard that is gone", async () => {
    const sessions = new ShardSessions(() => undefined);
    const handed = [sessions.add(7), sessions.add(8), sessions.add(9)];
    sessions.closed(8);
    expect(sessions.releaseAll()).toBe(2);
    expect(sessions.size).toBe(0);
    expect(await Promise.all(handed.map((h) => isSettled(h.closed)))).toEqual([true, true, true]);
  });
});

describe("AdoptedSessions (the shard's side)", () => {
  it("reports a session closed once it has closed, and closes it when the group asks", async () => {
    const reported: number[] = [];
    const adopted = new AdoptedSessions((id) => reported.push(id));
    const s = servedSession();
    adopted.track(3, Promise.resolve(s));
    await new Promise((r) => setImmediate(r));
    expect(adopted.size).toBe(1);
    expect(reported).toEqual([]);
    expect(adopted.close(3, 4430, "replaced")).toBe(true);
    expect(s.closes).toEqual([[4430, "replaced"]]);
    await new Promise((r) => setImmediate(r));
    expect(reported).toEqual([3]);
    expect(adopted.size).toBe(0);
    expect(adopted.close(3, 4430, "again")).toBe(false);
  });

  it("makes a close asked before the session's upgrade was answered as soon as it is", async () => {
    const reported: number[] = [];
    const adopted = new AdoptedSessions((id) => reported.push(id));
    let answer!: (s: ServedSession | undefined) => void;
    adopted.track(4, new Promise((r) => (answer = r)));
    expect(adopted.close(4, 4430, "replaced")).toBe(true);
    expect(adopted.close(4, 4500, "shutting down")).toBe(true);
    const s = servedSession();
    answer(s);
    await new Promise((r) => setImmediate(r));
    // The first close asked is the one made.
    expect(s.closes).toEqual([[4430, "replaced"]]);
    expect(reported).toEqual([4]);
  });

  it("reports at once a session that never opened (its upgrade refused, or its socket gone)", async () => {
    const reported: number[] = [];
    const adopted = new AdoptedSessions((id) => reported.push(id));
    adopted.track(5, Promise.resolve(undefined));
    adopted.track(6, Promise.reject(new Error("upgrade failed")));
    await new Promise((r) => setImmediate(r));
    expect(reported.sort()).toEqual([5, 6]);
    expect(adopted.size).toBe(0);
  });
});
