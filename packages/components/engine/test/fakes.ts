import { create } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client,
  ConnectError,
  type HandlerContext,
  createContextValues,
  createHandlerContext,
} from "@connectrpc/connect";
import { type CallContext, type Principal, currentCall, principalKey } from "@flaplab/component";
import { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
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
import type { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import type { EngineLogger } from "../src/index.js";

/** Lets pending promise callbacks and async loops run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function principal(username: string): Principal {
  return { username, token: `token-of-${username}`, expiresAt: new Date(Date.UTC(2030, 0, 1)) };
}

/** The client sends one ClientInput. */
export function input(session: MemoryStreamSession, seq: number, clientTimeMs = 0): void {
  session.pushMessage(ClientInputSchema, { seq, clientTimeMs });
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

/** The context of an EngineService call by `username` (none: no principal), as the runtime makes it. */
export function handlerContext(method: "startGame" | "handleInput" | "resumeGame", username?: string): HandlerContext {
  const contextValues = createContextValues();
  if (username !== undefined) {
    contextValues.set(principalKey, { username, token: `token-of-${username}`, expiresAt: new Date(Date.now() + 60_000) });
  }
  return createHandlerContext({
    service: EngineService,
    method: EngineService.method[method],
    protocolName: "test",
    requestMethod: "POST",
    url: `http://localhost/flaplab.engine.v1.EngineService/${method}`,
    contextValues,
  });
}

/** The error a call fails with, whether the handler throws or rejects. */
export async function rejection(call: () => unknown): Promise<ConnectError> {
  try {
    await call();
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}
