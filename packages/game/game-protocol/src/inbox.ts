/** What a session's reader is given: each chunk of client bytes, then the end of the input. */
export interface ChunkReader {
  /** A chunk as it arrived (not yet split into messages). */
  readonly onChunk: (chunk: Uint8Array) => void;
  /**
   * Called once, last: the client's input ended or the session closed (no error), or `onChunk`
   * threw `error` and reading stopped there.
   */
  readonly onEnd?: ((error?: unknown) => void) | undefined;
}

/**
 * The client bytes of one session, between its transport and its one reader. Chunks delivered
 * before the reader is set wait for it (and reach it in a microtask, never inside `read`); after
 * that each chunk goes straight to the reader, in the transport's own callback. Push-based on
 * purpose: a game waiting for its player's next press (often a second or more) holds no pending
 * promise and no iterator result, which thousands of games' worth would carry past every
 * young-generation collection.
 */
export class ChunkInbox {
  private readonly queue: Uint8Array[] = [];
  private reader: ChunkReader | undefined;
  private ended = false;
  private done = false;
  private draining = false;

  /** A chunk from the client. Ignored once the input has ended. */
  deliver(chunk: Uint8Array): void {
    if (this.ended) return;
    if (this.reader === undefined || this.draining) {
      this.queue.push(chunk);
      return;
    }
    this.give(this.reader, chunk);
  }

  /** The client's input ended (or the session closed): the reader's `onEnd` follows the queued chunks. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.reader !== undefined && !this.draining) this.finish(this.reader);
  }

  /** Whether the input has ended. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Starts reading; a session has one reader. */
  read(reader: ChunkReader): void {
    if (this.reader !== undefined) throw new Error("a stream session has one reader");
    this.reader = reader;
    if (this.queue.length === 0 && !this.ended) return;
    this.draining = true;
    queueMicrotask(() => {
      for (let chunk = this.queue.shift(); chunk !== undefined && !this.done; chunk = this.queue.shift()) this.give(reader, chunk);
      this.draining = false;
      if (this.ended) this.finish(reader);
    });
  }

  private give(reader: ChunkReader, chunk: Uint8Array): void {
    if (this.done) return;
    try {
      reader.onChunk(chunk);
    } catch (err) {
      this.ended = true;
      this.queue.length = 0;
      this.finish(reader, err);
    }
  }

  private finish(reader: ChunkReader, error?: unknown): void {
    if (this.done) return;
    this.done = true;
    if (error === undefined) reader.onEnd?.();
    else reader.onEnd?.(error);
  }
}

/**
 * A session's client bytes as an async iterable, for readers that wait on them with `for await`
 * (tests, and streams whose client should send nothing). Errors end the iteration.
 */
export function chunksOf(session: { read(reader: ChunkReader): void }): AsyncIterable<Uint8Array> {
  const queue: Uint8Array[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  session.read({
    onChunk: (chunk) => {
      queue.push(chunk);
      notify();
    },
    onEnd: () => {
      ended = true;
      notify();
    },
  });
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) {
          yield chunk;
          continue;
        }
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
