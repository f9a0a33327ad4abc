import { Code, ConnectError } from "@connectrpc/connect";
import { CloseCode } from "@flaplab/game-protocol";
import { describe, expect, it } from "vitest";
import { fakeMusic, flush, input } from "./fakes.js";
import { setup, frames, acks, start, tick } from "./stream-harness.js";

describe("game stream: clients", () => {

  it("does not wait for PlayMusic, and logs its failures", async () => {
    const music = fakeMusic((req) =>
      req.inputSeq === 2 ? new Promise<void>(() => {}) : Promise.reject(new ConnectError("no music stream for game g1", Code.NotFound)),
    );
    const s = setup({ music });
    s.addGame("g1");
    const session = s.connect("g1");
    await start(session);
    input(session, 2); // hangs forever
    input(session, 3); // fails
    await flush();
    await tick(s, 10);
    expect(frames(session)).toHaveLength(10);
    expect(s.logger.lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "PlayMusic failed", obj: expect.objectContaining({ sound: "FLAP" }) }),
    );
  });

  it("closes a flood of inputs 4420, lets a steady fast player through, and keeps other games going", async () => {
    const s = setup({ maxInputBurst: 5 });
    s.addGame("flood");
    s.addGame("steady");
    const flood = s.connect("flood");
    const steady = s.connect("steady");
    await start(flood);
    await start(steady);
    await tick(s);
    // One input per tick, for 40 ticks: never more than a tick gives back.
    for (let i = 0; i < 40; i++) {
      input(steady, i + 2);
      await tick(s);
    }
    expect(steady.isClosed).toBe(false);
    expect(acks(steady)).toHaveLength(40);
    // The start input used one credit; a tick gave it back; five more go through, the sixth closes.
    for (let seq = 2; seq <= 8; seq++) input(flood, seq);
    await flush();
    expect(flood.end).toMatchObject({ code: CloseCode.TooManyInputs, reason: "too many inputs: more than 5 at once or one per tick" });
    expect(acks(flood)).toHaveLength(5);
    expect(s.games.has("flood")).toBe(false);
    await tick(s);
    expect(frames(steady).at(-1)?.tick).toBe(42);
  });

  it("closes a slow client 4429 without holding up another game", async () => {
    const s = setup({ maxBufferedBytes: 1000 });
    s.addGame("slow");
    s.addGame("fast");
    const slow = s.connect("slow");
    const fast = s.connect("fast");
    await start(slow);
    await start(fast);
    await tick(s, 3);
    slow.bufferedBytes = 5000;
    await tick(s, 30);
    expect(slow.end).toMatchObject({ code: CloseCode.TooSlow, reason: "client too slow" });
    expect(frames(slow)).toHaveLength(3);
    expect(s.games.has("slow")).toBe(false);
    expect(frames(fast).map((f) => f.tick)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
    expect(fast.isClosed).toBe(false);
    expect(s.scheduler.size).toBe(1);
  });

  it("abandons a game whose client leaves: off the loop, out of the table, not recorded", async () => {
    const s = setup();
    s.addGame("g1");
    const session = s.connect("g1");
    await start(session);
    await tick(s, 5);
    session.leave();
    await flush();
    expect(s.scheduler.size).toBe(0);
    expect(s.games.has("g1")).toBe(false);
    await tick(s, 5);
    expect(frames(session)).toHaveLength(5);
    expect(s.score.calls).toHaveLength(0);
    expect(s.logger.lines).toContainEqual(
      expect.objectContaining({ level: "info", msg: "game abandoned: its stream ended before game over" }),
    );
  });

});
