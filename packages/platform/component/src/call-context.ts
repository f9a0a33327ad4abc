import { AsyncLocalStorage } from "node:async_hooks";
import type { ComponentName } from "./definition.js";
import type { Principal } from "./principal.js";

/**
 * Who is calling, for calls a component makes to another one: the runtime
 * forwards the principal's token and logs the source verb and game id.
 */
export interface CallContext {
  readonly component: ComponentName;
  /** The verb being served (e.g. "StartGame") or the activity (e.g. "Tick"). */
  readonly verb: string;
  readonly principal?: Principal | undefined;
  readonly gameId?: string | undefined;
  /**
   * W3C `traceparent` of the span this work belongs to, when tracing is on: the server span of the
   * call being served, or the trace a game was started in. Calls made on this path are its children.
   */
  readonly traceparent?: string | undefined;
}

const storage = new AsyncLocalStorage<CallContext>();

/** The call being served on this async path, if any. */
export function currentCall(): CallContext | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` as `ctx`. The runtime does this around every handler; a component
 * calls it itself for work that no request started, such as a game's tick.
 */
export function runInCall<T>(ctx: CallContext, fn: () => T): T {
  return storage.run(ctx, fn);
}
