import { describe, expect, it } from "vitest";
import { ChunkInbox, chunksOf } from "../src/index.js";

const bytes = (...b: number[]) => new Uint8Array(b);

function recorder() {
  const events: string[] = [];
  return {
    events,
    reader: {
      onChunk: (chunk: Uint8Array) => events.push(`chunk ${[...chunk].join(",")}`),
      onEnd: (err?: unknown) => events.push(err === undefined ? "end" : `end with ${(err as Error).message}`),
    },
  };
}

describe("ChunkInbox", () => {
  it("keeps what comes before the reader and hands it over in a microtask, never inside read()", async () => {
    const inbox = new ChunkInbox();
    inbox.deliver(bytes(1));
    inbox.deliver(bytes(2));
    const { events, reader } = recorder();
    inbox.read(reader);
    expect(events).toEqual([]);
    // Arrives while the queue is being handed over: after what was queued.
    inbox.deliver(bytes(3));
    await Promise.resolve();
    expect(events).toEqual(["chunk 1", "chunk 2", "chunk 3"]);
  });

  it("pushes each later chunk straight to the reader, in the deliverer's call", () => {
    const inbox = new ChunkInbox();
    const { events, reader } = recorder();
    inbox.read(reader);
    inbox.deliver(bytes(7));
    expect(events).toEqual(["chunk 7"]);
    inbox.deliver(bytes(8, 9));
    expect(events).toEqual(["chunk 7", "chunk 8,9"]);
  });

  it("ends once, after the queued chunks, and ignores what comes after the end", async () => {
    const inbox = new ChunkInbox();
    inbox.deliver(bytes(1));
    inbox.end();
    inbox.deliver(bytes(2));
    inbox.end();
    expect(inbox.isEnded).toBe(true);
    const { events, reader } = recorder();
    inbox.read(reader);
    await Promise.resolve();
    expect(events).toEqual(["chunk 1", "end"]);
  });

  it("ends at once for a reader that is already reading", () => {
    const inbox = new ChunkInbox();
    const { events, reader } = recorder();
    inbox.read(reader);
    inbox.end();
    expect(events).toEqual(["end"]);
  });

  it("stops reading when the reader throws, and gives it the error as the end", () => {
    const inbox = new ChunkInbox();
    const events: string[] = [];
    inbox.read({
      onChunk: (chunk) => {
        events.push(`chunk ${chunk[0]}`);
        if (chunk[0] === 2) throw new Error("bad chunk");
      },
      onEnd: (err) => events.push(`end: ${(err as Error | undefined)?.message ?? "none"}`),
    });
    inbox.deliver(bytes(1));
    expect(() => inbox.deliver(bytes(2))).not.toThrow();
    inbox.deliver(bytes(3));
    inbox.end();
    expect(events).toEqual(["chunk 1", "chunk 2", "end: bad chunk"]);
  });

  it("has one reader", () => {
    const inbox = new ChunkInbox();
    inbox.read(recorder().reader);
    expect(() => inbox.read(recorder().reader)).toThrow("one reader");
  });
});

describe("chunksOf", () => {
  it("iterates the chunks, those before and after the loop starts, to the end", async () => {
    const inbox = new ChunkInbox();
    inbox.deliver(bytes(1));
    const chunks = chunksOf({ read: (reader) => inbox.read(reader) });
    const seen: number[] = [];
    const done = (async () => {
      for await (const chunk of chunks) seen.push(chunk[0]!);
    })();
    await Promise.resolve();
    inbox.deliver(bytes(2));
    await new Promise((r) => setImmediate(r));
    inbox.deliver(bytes(3));
    inbox.end();
    await done;
    expect(seen).toEqual([1, 2, 3]);
  });
});
