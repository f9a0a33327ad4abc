import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";

/** The ConnectError `promise` rejects with; throws when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

/** Expects `p` to fail with `code` (and a message matching `message`); returns the error. */
export async function expectCode(p: Promise<unknown>, code: Code, message?: RegExp): Promise<ConnectError> {
  const err = await rejection(p);
  expect(Code[err.code]).toBe(Code[code]);
  if (message) expect(err.rawMessage).toMatch(message);
  return err;
}
