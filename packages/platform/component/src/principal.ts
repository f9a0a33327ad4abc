import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";

/**
 * The verified caller of an RPC: a player (their token), or a component acting for a player (a
 * component credential signed with that component's own key).
 */
export interface Principal {
  /** The player; for a component credential, the player it acts for ("" for none). */
  readonly username: string;
  /** The credential itself. */
  readonly token: string;
  readonly expiresAt: Date;
  /** The calling component, when the call carries a component credential; absent for a player. */
  readonly service?: string | undefined;
  /** The component a component credential was issued for (its audience); absent for a player. */
  readonly callee?: string | undefined;
  /** On a game or music stream: the game its stream ticket was issued for. Absent on RPCs. */
  readonly gameId?: string | undefined;
  /** On a game or music stream: the engine (group) its stream ticket names; the game stream is admitted only there. */
  readonly engine?: string | undefined;
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
  if (principal.username === "") {
    throw new ConnectError("this method acts for a player, and the component credential names none", Code.InvalidArgument);
  }
  return principal;
}
