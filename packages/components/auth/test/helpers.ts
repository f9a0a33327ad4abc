import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createHandlerContext, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { AuthService, LoginRequestSchema, RegisterRequestSchema } from "@flaplab/contracts/auth/v1/auth_pb";
import { expect } from "vitest";
import type { ScryptParams } from "../src/index.js";

/** Cheap scrypt for tests (the format and code path are the same). */
export const FAST_SCRYPT: ScryptParams = { N: 1024, r: 8, p: 1, keyLength: 32 };

function ctx(name: "Register" | "Login"): HandlerContext {
  const method = AuthService.methods.find((m) => m.name === name)!;
  return createHandlerContext({
    service: AuthService,
    method,
    protocolName: "test",
    requestMethod: "POST",
    url: `http://localhost/${AuthService.typeName}/${name}`,
  });
}

export interface PlainSession {
  username: string;
  token: string;
  expiresAt: Date;
}

function plain(res: { session?: { username?: string; token?: string; expiresAt?: unknown } | undefined }): PlainSession {
  const s = res.session;
  expect(s).toBeDefined();
  const ts = s!.expiresAt as Parameters<typeof timestampDate>[0];
  return { username: s!.username ?? "", token: s!.token ?? "", expiresAt: timestampDate(ts) };
}

export async function register(impl: ServiceImpl<typeof AuthService>, username: string, password: string) {
  return plain(await impl.register(create(RegisterRequestSchema, { username, password }), ctx("Register")));
}

export async function login(impl: ServiceImpl<typeof AuthService>, username: string, password: string) {
  return plain(await impl.login(create(LoginRequestSchema, { username, password }), ctx("Login")));
}

export { expectCode } from "@flaplab/testkit";
