import { createContextKey, type HandlerContext } from "@connectrpc/connect";

/**
 * The network address of the client that sent a call, as the host saw it (the socket's remote
 * address, e.g. "127.0.0.1" or "::ffff:10.0.0.7"). Set by the host on every networked call;
 * undefined in direct and serialized calls, which have no socket.
 */
export const clientAddressKey = createContextKey<string | undefined>(undefined, {
  description: "flaplab client address",
});

/** The caller's network address, or undefined when the call did not come over a socket. */
export function clientAddressOf(ctx: Pick<HandlerContext, "values">): string | undefined {
  return ctx.values.get(clientAddressKey);
}
