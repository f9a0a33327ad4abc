// An in-memory StreamSession for tests and benchmarks: no transport, the caller plays the client.
import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { Principal } from "@flaplab/component";
import { DEFAULT_MAX_MESSAGE_BYTES, DelimitedDecoder, encodeDelimited } from "./delimited.js";
import { ChunkInbox, type ChunkReader } from "./inbox.js";
import type { SessionEnd, StreamSession } from "./session.js";

export interface MemorySessionOptions {
  readonly gameId: string;
  /**
   * Who opened the stream, as the stream server's authorization gives it. Without `gameId`, the
   * principal carries a stream ticket for this session's game (what a real client opens with);
   * give another `gameId` to play a client holding the ticket of another game.
   */
  readonly principal: Principal;
  /** Which stream this is: "engine" (the default) or "music". */
  readonly kind?: string;
  /**
   * Keep every chunk `send` accepts in `sent`, and when it was sent in `sentAt` (default true).
   * Turn it off for long runs, so memory stays flat.
   */
  readonly keepSent?: boolean;
  /**
   * Called with each chunk `send` or `sendFrom` accepts, after it is kept, as `source[start, end)`
   * (read it during the call: `sendFrom`'s source is the sender's to overwrite). A scripted client
   * answers here: it may `push` its next input, as a real client would on receiving that chunk.
   */
  readonly onSend?: (source: Uint8Array, start: number, end: number) => void;
}

/**
 * Sessions with pushed bytes waiting for delivery. One microtask delivers them all: thousands of
 * scripted clients pressing in the same tick queue one microtask, not one each (a benchmark's
 * client then adds almost no garbage to the engine's collections).
 */
class DeliveryQueue {
  private waiting: MemoryStreamSession[] = [];
  private spare: MemoryStreamSession[] = [];
  private queued = false;

  add(session: MemoryStreamSession): void {
    this.waiting.push(session);
    if (this.queued) return;
    this.queued = true;
    queueMicrotask(this.deliverAll);
  }

  /** Delivers the sessions waiting now; a push made meanwhile waits for the next microtask. */
  private readonly deliverAll = (): void => {
    const batch = this.waiting;
    this.waiting = this.spare;
    this.queued = false;
    for (let i = 0; i < batch.length; i++) {
      try {
        (batch[i] as MemoryStreamSession).deliver();
      } catch (err) {
        // As a microtask of its own would have: the error is the process's, the others still get their bytes.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    batch.length = 0;
    this.spare = batch;
  };
}

const awaitingDelivery = new DeliveryQueue();

/**
 * A `StreamSession` held in memory. The handler under test gets it as from the transport; the
 * caller plays the client: it writes with `push` / `pushMessage`, ends its sending side with
 * `endInput`, goes away with `leave`, and reads what the handler sent from `sent` / `messages`.
 * `end` (or `closed`) says how the session ended.
 *
 * ```ts
 * const session = new MemoryStreamSession({ gameId: "g1", principal });
 * handler(session);
 * session.pushMessage(ClientInputSchema, { seq: 1, clientTimeMs: 0 });
 * session.messages(GameStreamMessageSchema); // what the client received, decoded
 * ```
 */
export class MemoryStreamSession implements StreamSession {
  readonly gameId: string;
  readonly principal: Principal;
  readonly kind: string;
  /** What the transport would report as queued and unsent. Set it to play a client that does not read. */
  bufferedBytes = 0;
  readonly closed: Promise<SessionEnd>;
  private readonly sentChunks: Uint8Array[] = [];
  private readonly sentTimes: number[] = [];
  private readonly keepSent: boolean;
  private readonly onSend: ((source: Uint8Array, start: number, end: number) => void) | undefined;
  private ended: SessionEnd | undefined;
  private resolveClosed!: (end: SessionEnd) => void;
  /** Client bytes in the order pushed; they end after `endInput`, `leave` or `close`. */
  private readonly inbox = new ChunkInbox();
  /** Pushed and not yet delivered: a push reaches the handler in a microtask, as bytes from a network would, never inside the call that made it. */
  private readonly pushed: Uint8Array[] = [];
  private inputEnding = false;
  private deliveryQueued = false;

  constructor(options: MemorySessionOptions) {
    this.gameId = options.gameId;
    this.principal = options.principal.gameId === undefined ? { ...options.principal, gameId: options.gameId } : options.principal;
    this.kind = options.kind ?? "engine";
    this.keepSent = options.keepSent ?? true;
    this.onSend = options.onSend;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  read(reader: ChunkReader): void {
    this.inbox.read(reader);
  }

  /** Every chunk sent, in order (empty with `keepSent: false`). */
  get sent(): readonly Uint8Array[] {
    return this.sentChunks;
  }

  /** When each chunk of `sent` was sent, `performance.now()`. */
  get sentAt(): readonly number[] {
    return this.sentTimes;
  }

  /** How the session ended; undefined while it is open. */
  get end(): SessionEnd | undefined {
    return this.ended;
  }

  get isClosed(): boolean {
    return this.ended !== undefined;
  }

  /** Client → server bytes. Throws once the client's input has ended (or the session closed). */
  push(bytes: Uint8Array): void {
    if (this.inputEnding) throw new Error("the session's input has ended");
    this.pushed.push(bytes);
    this.queueDelivery();
  }

  /** Pushes one size-delimited message, as the client writes it. */
  pushMessage<D extends DescMessage>(schema: D, message: MessageInitShape<D>): void {
    this.push(encodeDelimited(schema, create(schema, message)));
  }

  /** The client closes its sending side; the session stays open. */
  endInput(): void {
    if (this.inputEnding) return;
    this.inputEnding = true;
    this.queueDelivery();
  }

  /** The client goes away: the session ends `by: "client"`. */
  leave(code = 0, reason = ""): void {
    this.finish({ code, reason, by: "client" });
  }

  send(bytes: Uint8Array): boolean {
    if (this.ended) return false;
    if (this.keepSent) {
      this.sentChunks.push(bytes);
      this.sentTimes.push(performance.now());
    }
    this.onSend?.(bytes, 0, bytes.length);
    return true;
  }

  /** Keeps a copy only with `keepSent` (so a scripted client allocates nothing here). */
  sendFrom(source: Uint8Array, start: number, end: number): boolean {
    if (this.ended) return false;
    if (this.keepSent) {
      this.sentChunks.push(source.slice(start, end));
      this.sentTimes.push(performance.now());
    }
    this.onSend?.(source, start, end);
    return true;
  }

  close(code: number, reason: string): void {
    this.finish({ code, reason, by: "server" });
  }

  /** Everything sent so far, decoded as size-delimited `schema` messages. */
  messages<D extends DescMessage>(schema: D, maxBytes = DEFAULT_MAX_MESSAGE_BYTES): MessageShape<D>[] {
    if (!this.keepSent) throw new Error("this session does not keep what was sent (keepSent: false)");
    const decoder = new DelimitedDecoder(schema, maxBytes);
    return this.sentChunks.flatMap((chunk) => decoder.push(chunk));
  }

  private queueDelivery(): void {
    if (this.deliveryQueued) return;
    this.deliveryQueued = true;
    awaitingDelivery.add(this);
  }

  /** Hands the pushed bytes to the inbox (called by the delivery microtask). */
  deliver(): void {
    this.deliveryQueued = false;
    for (let chunk = this.pushed.shift(); chunk !== undefined; chunk = this.pushed.shift()) this.inbox.deliver(chunk);
    if (this.inputEnding) this.inbox.end();
  }

  private finish(end: SessionEnd): void {
    if (this.ended) return;
    this.ended = end;
    this.endInput();
    this.resolveClosed(end);
  }
}
