import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Sound, SoundClipSchema, type SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import { describe, expect, it } from "vitest";
import { createMusicStreams } from "../src/index.js";

function clip(sound: Sound, inputSeq = 0, tick = 0): SoundClip {
  return create(SoundClipSchema, { sound, inputSeq, tick, mediaType: "audio/wav", audio: new Uint8Array([1, 2, 3]) });
}

async function connectCode(p: Promise<unknown>): Promise<Code | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("createMusicStreams", () => {
  it("delivers clips to the sink of the right game", async () => {
    const streams = createMusicStreams();
    const a: SoundClip[] = [];
    const b: SoundClip[] = [];
    streams.open("a", (c) => void a.push(c));
    streams.open("b", (c) => void b.push(c));
    expect(streams.has("a")).toBe(true);
    expect(streams.has("c")).toBe(false);
    const sent = clip(Sound.FLAP, 3, 9);
    await streams.send("a", sent);
    expect(a).toEqual([sent]);
    expect(b).toEqual([]);
  });

  it("rejects a send to a game with no stream with NotFound", async () => {
    const streams = createMusicStreams();
    const err = await streams.send("nope", clip(Sound.FLAP)).catch((e: unknown) => ConnectError.from(e));
    expect(err?.code).toBe(Code.NotFound);
    expect(err?.rawMessage).toBe("no music stream for game nope");
  });

  it("allows one stream per game and a new one after the first closes", async () => {
    const streams = createMusicStreams();
    const first = streams.open("g", () => {});
    let err: ConnectError | undefined;
    try {
      streams.open("g", () => {});
    } catch (e) {
      err = ConnectError.from(e);
    }
    expect(err?.code).toBe(Code.AlreadyExists);
    expect(err?.rawMessage).toMatch(/already open/);

    first.close();
    first.close(); // idempotent
    expect(await first.closed).toBe("closed");
    expect(streams.has("g")).toBe(false);

    const got: SoundClip[] = [];
    const second = streams.open("g", (c) => void got.push(c));
    first.close(); // closing the old handle again must not touch the new stream
    expect(streams.has("g")).toBe(true);
    await streams.send("g", clip(Sound.POINT));
    expect(got).toHaveLength(1);
    second.close();
  });

  it("rejects an empty game id", () => {
    const streams = createMusicStreams();
    expect(() => streams.open("", () => {})).toThrow(/game id is required/);
  });

  it("delivers one game's clips in call order, one at a time", async () => {
    const streams = createMusicStreams();
    const order: string[] = [];
    const gate = deferred();
    let inFlight = 0;
    streams.open("g", async (c) => {
      inFlight++;
      expect(inFlight).toBe(1);
      order.push(`start ${c.inputSeq}`);
      if (c.inputSeq === 1) await gate.promise;
      order.push(`end ${c.inputSeq}`);
      inFlight--;
    });
    const p1 = streams.send("g", clip(Sound.FLAP, 1));
    const p2 = streams.send("g", clip(Sound.FLAP, 2));
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual(["start 1"]);
    gate.resolve();
    await Promise.all([p1, p2]);
    expect(order).toEqual(["start 1", "end 1", "start 2", "end 2"]);
  });

  it("a slow game does not hold up another", async () => {
    const streams = createMusicStreams();
    const gate = deferred();
    streams.open("slow", () => gate.promise);
    const fast: SoundClip[] = [];
    streams.open("fast", (c) => void fast.push(c));
    const slow = streams.send("slow", clip(Sound.FLAP));
    await streams.send("fast", clip(Sound.FLAP));
    expect(fast).toHaveLength(1);
    gate.resolve();
    await slow;
  });

  it("closeAfter closes the stream after delivery and drops clips queued behind it", async () => {
    const streams = createMusicStreams();
    const got: Sound[] = [];
    const handle = streams.open("g", async (c) => {
      await Promise.resolve();
      got.push(c.sound);
    });
    const die = streams.send("g", clip(Sound.DIE), { closeAfter: true });
    const late = streams.send("g", clip(Sound.POINT));
    await die;
    expect(await connectCode(late)).toBe(Code.NotFound);
    expect(got).toEqual([Sound.DIE]);
    expect(await handle.closed).toBe("game-over");
    expect(streams.has("g")).toBe(false);
  });

  it("a throwing sink fails only its own send, closes its stream, and leaves other games alone", async () => {
    const streams = createMusicStreams();
    const bad = streams.open("bad", () => {
      throw new Error("socket gone");
    });
    const rejecting = streams.open("rejecting", () => Promise.reject(new Error("write failed")));
    const good: SoundClip[] = [];
    streams.open("good", (c) => void good.push(c));

    const err = await streams.send("bad", clip(Sound.FLAP)).catch((e: unknown) => ConnectError.from(e));
    expect(err?.code).toBe(Code.Unavailable);
    expect(err?.rawMessage).toMatch(/game bad failed: socket gone/);
    expect(await bad.closed).toBe("sink-failed");
    expect(streams.has("bad")).toBe(false);

    expect(await connectCode(streams.send("rejecting", clip(Sound.FLAP)))).toBe(Code.Unavailable);
    expect(await rejecting.closed).toBe("sink-failed");

    await streams.send("good", clip(Sound.POINT));
    expect(good).toHaveLength(1);
    expect(streams.has("good")).toBe(true);
  });
});
