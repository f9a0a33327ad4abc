import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";

/** The verified caller of an RPC: whose token it carries. */
export interface Principal {
  readonly username: string;
  /** The bearer token itself, forwarded on calls made on the player's behalf. */
  readonly token: string;
  readonly expiresAt: Date;
}

/** Set by the runtime on every authenticated call, in every call mode. */
export const principalKey = createContextKey<Principal | undefined>(undefined, {
  description: "flaplab principal",
});

/** The caller of a protected method. The runtime has verified the token before the handler runs. */
export function requirePrincipal(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (!principal) {
    throw new ConnectError("this method needs a valid token", Code.Unauthenticated);
  }
  return principal;
}
