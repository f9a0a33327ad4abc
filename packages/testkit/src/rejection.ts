import { ConnectError } from "@connectrpc/connect";

/** The ConnectError `promise` rejects with; throws when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}
