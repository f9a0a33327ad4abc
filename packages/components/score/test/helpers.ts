import { create } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { principalKey } from "@flaplab/component";
import {
  GetScoresRequestSchema,
  RecordRunRequestSchema,
  ScoreService,
  type GetScoresResponse,
  type RecordRunRequest,
  type Run,
} from "@flaplab/contracts/score/v1/score_pb";
import { expect } from "vitest";
import type { createScore } from "../src/index.js";

type ScoreImpl = ReturnType<typeof createScore>;

export function ctxAs(username: string | undefined, method: "RecordRun" | "GetScores"): HandlerContext {
  const contextValues = createContextValues();
  if (username !== undefined) {
    contextValues.set(principalKey, { username, token: `token-of-${username}`, expiresAt: new Date(Date.now() + 3600_000) });
  }
  return createHandlerContext({
    service: ScoreService,
    method: ScoreService.methods.find((m) => m.name === method)!,
    protocolName: "test",
    requestMethod: "POST",
    url: `http://localhost/${ScoreService.typeName}/${method}`,
    contextValues,
  });
}

export async function record(
  impl: ScoreImpl,
  username: string | undefined,
  init: Partial<Pick<RecordRunRequest, "gameId" | "score" | "ticks" | "seed">>,
): Promise<Run> {
  const res = await impl.recordRun(create(RecordRunRequestSchema, init), ctxAs(username, "RecordRun"));
  expect(res.run).toBeDefined();
  return res.run as Run;
}

export async function scores(impl: ScoreImpl, username: string, limit = 0): Promise<GetScoresResponse> {
  return (await impl.getScores(create(GetScoresRequestSchema, { limit }), ctxAs(username, "GetScores"))) as GetScoresResponse;
}

export { expectCode } from "@flaplab/testkit";
