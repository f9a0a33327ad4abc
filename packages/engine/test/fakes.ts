import { create } from "@bufbuild/protobuf";
import type { CallOptions, Client } from "@connectrpc/connect";
import { type CallContext, type Principal, currentCall } from "@flaplab/component";
import { ClientInputSchema, type GameStreamMessage, GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import {
  type MusicService,
  type PlayMusicRequest,
  PlayMusicRequestSchema,
  PlayMusicResponseSchema,
} from "@flaplab/contracts/music/v1/music_pb";
import {
  type RecordRunRequest,
  RecordRunRequestSchema,
  RecordRunResponseSchema,
  type ScoreService,
} from "@flaplab/contracts/score/v1/score_pb";
import { DelimitedDecoder, type SessionEnd, type StreamSession, encodeDelimited } from "@flaplab/game-stream";
import type { EngineLogger } from "../src/index.js";

/** Lets pending promise callbacks and async loops run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function principal(username: string): Principal {
  return { username, token: `token-of-${username}`, expiresAt: new Date(Date.UTC(2030, 0, 1)) };
}

/** An in-memory StreamSession: the test pushes client bytes and reads what was sent. */
export class FakeSession implements StreamSession {
  readonly kind = "engine";
  readonly sent: Uint8Array[] = [];
  /** When each send happened, performance.now(). */
  readonly sentAt: number[] = [];
  bufferedBytes = 0;
  end: SessionEnd | undefined;
  readonly closed: Promise<SessionEnd>;
  private resolveClosed: (end: SessionEnd) => void = () => {};
  private readonly queue: Uint8Array[] = [];
  private waiting: ((r: IteratorResult<Uint8Array>) => void) | undefined;
  private inputEnded = false;

  constructor(
    readonly gameId: string,
    readonly principal: Principal,
  ) {
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  readonly incoming: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const chunk = this.queue.shift();
        if (chunk) return Promise.resolve({ value: chunk, done: false });
        if (this.inputEnded) return Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<Uint8Array>>((resolve) => {
          this.waiting = resolve;
        });
      },
    }),
  };

  /** Client → server bytes. */
  push(bytes: Uint8Array): void {
    if (this.inputEnded) throw new Error("the session's input has ended");
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting({ value: bytes, done: false });
    else this.queue.push(bytes);
  }

  /** Sends one ClientInput. */
  input(seq: number, clientTimeMs = 0): void {
    this.push(encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs })));
  }

  send(bytes: Uint8Array): boolean {
    if (this.end) return false;
    this.sent.push(bytes);
    this.sentAt.push(performance.now());
    return true;
  }

  close(code: number, reason: string): void {
    this.finish({ code, reason, by: "server" });
  }

  /** The client goes away. */
  leave(): void {
    this.finish({ code: 0, reason: "", by: "client" });
  }

  get isClosed(): boolean {
    return this.end !== undefined;
  }

  /** Everything sent, decoded. */
  messages(): GameStreamMessage[] {
    const decoder = new DelimitedDecoder(GameStreamMessageSchema);
    return this.sent.flatMap((b) => decoder.push(b));
  }

  private finish(end: SessionEnd): void {
    if (this.end) return;
    this.end = end;
    this.inputEnded = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
    this.resolveClosed(end);
  }
}

export interface RecordedCall<T> {
  readonly request: T;
  readonly call: CallContext | undefined;
  readonly options: CallOptions | undefined;
}

/** A MusicService client that records each call and the call context it ran in. */
export function fakeMusic(reply: (req: PlayMusicRequest) => Promise<void> = () => Promise.resolve()) {
  const calls: RecordedCall<PlayMusicRequest>[] = [];
  const client: Client<typeof MusicService> = {
    async playMusic(init, options) {
      const request = create(PlayMusicRequestSchema, init);
      calls.push({ request, call: currentCall(), options });
      await reply(request);
      return create(PlayMusicResponseSchema, { bytesSent: 1 });
    },
  };
  return { client, calls };
}

/** A ScoreService client that records each RecordRun and the call context it ran in. */
export function fakeScore(reply: (req: RecordRunRequest, attempt: number) => Promise<void> = () => Promise.resolve()) {
  const calls: RecordedCall<RecordRunRequest>[] = [];
  const client: Client<typeof ScoreService> = {
    async recordRun(init, options) {
      const request = create(RecordRunRequestSchema, init);
      calls.push({ request, call: currentCall(), options });
      await reply(request, calls.length);
      return create(RecordRunResponseSchema, {});
    },
    getScores() {
      return Promise.reject(new Error("not used"));
    },
  };
  return { client, calls };
}

export interface LogLine {
  readonly level: "info" | "warn" | "error";
  readonly obj: object;
  readonly msg: string | undefined;
}

export function memoryLogger(): EngineLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (obj, msg) => void lines.push({ level: "info", obj, msg }),
    warn: (obj, msg) => void lines.push({ level: "warn", obj, msg }),
    error: (obj, msg) => void lines.push({ level: "error", obj, msg }),
  };
}
