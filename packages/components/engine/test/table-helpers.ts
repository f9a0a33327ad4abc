// What the GameTable tests share.
import { type Code, ConnectError } from "@connectrpc/connect";

export const alice = { username: "alice", token: "token-a" };

export function codeOf(fn: () => unknown): Code {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConnectError) return err.code;
    throw err;
  }
  throw new Error("expected a ConnectError");
}

/** A fake clock the test moves by hand. */
export function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}
