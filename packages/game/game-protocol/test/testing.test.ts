import { create } from "@bufbuild/protobuf";
import type { Principal } from "@flaplab/component";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { Sound, SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { describe, expect, it } from "vitest";
import { chunksOf, CloseCode, DelimitedDecoder, StreamProtocolError, type StreamSession, encodeDelimited } from "../src/index.js";
import { MemoryStreamSession } from "../src/testing.js";

const alice: Principal = { username: "alice", token: "token-a", expiresAt: new Date(Date.UTC(2030, 0, 1)) };

function clip(sound: Sound, tick = 0) {
  return create(SoundClipSchema, { sound, tick, mediaType: "audio/wav", audio: new Uint8Array([1, 2, 3]) });
}

/** Reads the session's client bytes to their end in the background. */
function drain(session: StreamSession): { chunks: Uint8Array[]; done: Promise<void> } {
  const chunks: Uint8Array[] = [];
  const done = (async () => {
    for await (const chunk of chunksOf(session)) chunks.push(chunk);
  })();
  return { chunks, done };
}

function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe("MemoryStreamSession", () => {
  it("is an open session of the given game, principal and kind", () => {
    const engine = new MemoryStreamSession({ gameId: "g1", principal: alice });
    expect(engine).toMatchObject({ gameId: "g1", principal: alice, kind: "engine", bufferedBytes: 0 });
    expect(engine.end).toBeUndefined();
    expect(engine.isClosed).toBe(false);
    expect(new MemoryStreamSession({ gameId: "g1", principal: alice, kind: "music" }).kind).toBe("music");
  });

  it("gives the pushed bytes to the reader in order, pushed before or while it waits", async () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    session.push(new Uint8Array([1]));
    const reader = drain(session);
    await flush();
    expect(reader.chunks).toEqual([new Uint8Array([1])]);
    session.push(new Uint8Array([2, 3]));
    session.pushMessage(ClientInputSchema, { seq: 4, clientTimeMs: 5 });
    await flush();
    expect(reader.chunks).toEqual([
      new Uint8Array([1]),
      new Uint8Array([2, 3]),
      encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq: 4, clientTimeMs: 5 })),
    ]);
  });

  it("hands a push made inside onSend to the reader after the send has returned, as a network would", async () => {
    const order: string[] = [];
    const session = new MemoryStreamSession({
      gameId: "g1",
      principal: alice,
      keepSent: false,
      onSend: () => session.push(new Uint8Array([9])),
    });
    session.read({ onChunk: (chunk) => order.push(`read ${chunk[0]}`) });
    session.send(new Uint8Array([1]));
    order.push("send returned");
    await Promise.resolve();
    expect(order).toEqual(["send returned", "read 9"]);
  });

  it("delivers the pushes of many sessions after the turn that made them, each session's in order", async () => {
    const order: string[] = [];
    const sessions = [1, 2, 3].map((n) => new MemoryStreamSession({ gameId: `g${n}`, principal: alice }));
    for (const [i, session] of sessions.entries()) {
      session.read({
        onChunk: (chunk) => {
          order.push(`g${i + 1}:${chunk[0]}`);
          // The first game's client answers its first chunk at once: a push during the delivery,
          // which reaches the reader after this call returns.
          if (i === 0 && chunk[0] === 1) {
            sessions[0]!.push(new Uint8Array([7]));
            order.push("g1 answered");
          }
        },
      });
    }
    sessions[2]!.push(new Uint8Array([5]));
    sessions[0]!.push(new Uint8Array([1]));
    sessions[2]!.push(new Uint8Array([6]));
    sessions[1]!.push(new Uint8Array([3]));
    expect(order).toEqual([]);
    await flush();
    expect(order).toEqual(["g3:5", "g3:6", "g1:1", "g1 answered", "g1:7", "g2:3"]);
  });

  it("keeps what was sent, when, and decodes it however it was chunked", () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice, kind: "music" });
    const bytes = [clip(Sound.FLAP, 1), clip(Sound.DIE, 2)].map((c) => encodeDelimited(SoundClipSchema, c));
    const both = new Uint8Array([...bytes[0]!, ...bytes[1]!]);
    const before = performance.now();
    expect(session.send(both.subarray(0, 3))).toBe(true);
    expect(session.send(both.subarray(3))).toBe(true);
    expect(session.sent).toEqual([both.subarray(0, 3), both.subarray(3)]);
    expect(session.sentAt).toHaveLength(2);
    expect(session.sentAt[0]).toBeGreaterThanOrEqual(before);
    expect(session.sentAt[1]).toBeGreaterThanOrEqual(session.sentAt[0]!);
    expect(session.messages(SoundClipSchema)).toEqual([clip(Sound.FLAP, 1), clip(Sound.DIE, 2)]);
    // The same size limit as a DelimitedDecoder.
    expect(() => session.messages(SoundClipSchema, 4)).toThrow(StreamProtocolError);
  });

  it("close: ends by the server with the code and reason, ends the input, refuses sends; later closes do nothing", async () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    const reader = drain(session);
    await flush();
    session.close(CloseCode.TooSlow, "client too slow");
    const end = { code: CloseCode.TooSlow, reason: "client too slow", by: "server" };
    expect(session.end).toEqual(end);
    expect(session.isClosed).toBe(true);
    await expect(session.closed).resolves.toEqual(end);
    await reader.done;
    expect(session.send(new Uint8Array([1]))).toBe(false);
    expect(session.sent).toHaveLength(0);
    expect(() => session.push(new Uint8Array([1]))).toThrow(/input has ended/);
    session.close(CloseCode.Normal, "game over");
    session.leave();
    expect(session.end).toEqual(end);
  });

  it("leave: ends by the client, with code 0 and no reason unless given", async () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    session.leave();
    await expect(session.closed).resolves.toEqual({ code: 0, reason: "", by: "client" });
    const other = new MemoryStreamSession({ gameId: "g1", principal: alice });
    other.leave(4000, "bye");
    expect(other.end).toEqual({ code: 4000, reason: "bye", by: "client" });
  });

  it("endInput: the input ends and the session stays open", async () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    const reader = drain(session);
    session.endInput();
    await reader.done;
    expect(session.isClosed).toBe(false);
    expect(session.send(new Uint8Array([1]))).toBe(true);
    expect(() => session.push(new Uint8Array([1]))).toThrow(/input has ended/);
  });

  it("onSend and keepSent: false make a scripted client that keeps nothing", async () => {
    const seen: number[] = [];
    const session: MemoryStreamSession = new MemoryStreamSession({
      gameId: "g1",
      principal: alice,
      keepSent: false,
      onSend: (_source, start, end) => {
        seen.push(end - start);
        session.pushMessage(ClientInputSchema, { seq: seen.length });
      },
    });
    const reader = drain(session);
    session.send(new Uint8Array([1, 2]));
    const reused = new Uint8Array([9, 3, 9]);
    session.sendFrom(reused, 1, 2);
    await flush();
    expect(seen).toEqual([2, 1]);
    expect(session.sent).toHaveLength(0);
    expect(session.sentAt).toHaveLength(0);
    expect(() => session.messages(ClientInputSchema)).toThrow(/keepSent: false/);
    const decoder = new DelimitedDecoder(ClientInputSchema);
    expect(reader.chunks.flatMap((c) => decoder.push(c)).map((m) => m.seq)).toEqual([1, 2]);
    session.close(CloseCode.Normal, "game over");
    expect(session.send(new Uint8Array([4]))).toBe(false);
    expect(seen).toEqual([2, 1]);
  });

  it("sendFrom keeps a copy of the range, so the sender may overwrite its buffer", () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    const buffer = new Uint8Array([7, 1, 2, 7]);
    expect(session.sendFrom(buffer, 1, 3)).toBe(true);
    buffer.fill(0);
    expect([...(session.sent[0] ?? [])]).toEqual([1, 2]);
    session.close(CloseCode.Normal, "game over");
    expect(session.sendFrom(buffer, 0, 1)).toBe(false);
    expect(session.sent).toHaveLength(1);
  });

  it("reports the buffered bytes it is given", () => {
    const session = new MemoryStreamSession({ gameId: "g1", principal: alice });
    session.bufferedBytes = 5000;
    expect((session as StreamSession).bufferedBytes).toBe(5000);
  });
});
