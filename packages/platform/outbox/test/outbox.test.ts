import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Delivery, DurableOutbox } from "../src/index.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function file(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "flaplab-outbox-"));
  dirs.push(d);
  return join(d, "outbox.sqlite");
}

/** A receiver that is down until `up` is set, and keeps what it took by id (idempotent). */
function receiver() {
  const taken = new Map<string, number>();
  const state = { up: false, calls: 0 };
  const deliver = async (item: { n: number }, id: string): Promise<Delivery> => {
    state.calls++;
    if (!state.up) throw new Error("connect ECONNREFUSED");
    if (item.n < 0) return "refused";
    taken.set(id, (taken.get(id) ?? 0) + 1);
    return "delivered";
  };
  return { taken, state, deliver };
}

describe("DurableOutbox", () => {
  it("keeps items while the receiver is down and delivers each once when it is back", async () => {
    const r = receiver();
    const outbox = new DurableOutbox({ file: await file(), deliver: r.deliver, firstRetryMs: 20, maxRetryMs: 40 });
    outbox.start();
    outbox.add("g1", { n: 1 });
    outbox.add("g2", { n: 2 });
    outbox.add("g1", { n: 99 }); // the same id: ignored
    expect(outbox.size).toBe(2);
    await new Promise((res) => setTimeout(res, 150));
    expect(r.state.calls).toBeGreaterThan(2); // retried
    expect(outbox.size).toBe(2);
    r.state.up = true;
    await new Promise((res) => setTimeout(res, 150));
    expect(outbox.size).toBe(0);
    expect([...r.taken.entries()]).toEqual([
      ["g1", 1],
      ["g2", 1],
    ]);
    await outbox.close();
  });

  it("survives the process: items added before a close are delivered by the next outbox on the file", async () => {
    const path = await file();
    const down = receiver();
    const first = new DurableOutbox({ file: path, deliver: down.deliver });
    first.add("g1", { n: 1 });
    await first.close();
    const up = receiver();
    up.state.up = true;
    const second = new DurableOutbox({ file: path, deliver: up.deliver });
    expect(second.size).toBe(1);
    second.start();
    await new Promise((res) => setTimeout(res, 50));
    expect([...up.taken.keys()]).toEqual(["g1"]);
    expect(second.size).toBe(0);
    await second.close();
  });

  it("drops an item the receiver refuses for good, and reports each round", async () => {
    const r = receiver();
    r.state.up = true;
    const outbox = new DurableOutbox({ file: await file(), deliver: r.deliver });
    outbox.add("bad", { n: -1 });
    outbox.add("good", { n: 1 });
    expect(await outbox.flush()).toEqual({ delivered: 1, refused: 1, left: 0 });
    expect(outbox.size).toBe(0);
    await outbox.close();
    expect(() => outbox.add("late", { n: 1 })).toThrow(/closed/);
  });
});
