/** The logged-in player's token, kept in localStorage until it expires. */
export interface StoredSession {
  readonly username: string;
  readonly token: string;
  /** Expiry, ms since the epoch. */
  readonly expiresAtMs: number;
}

/** A token this close to expiry counts as expired (it would lapse mid-game). */
export const EXPIRY_MARGIN_MS = 30_000;

const KEY = "flaplab.session";

/** The `exp` claim of a JWT, ms, or undefined when it has none or is not a JWT. */
export function jwtExpiryMs(token: string): number | undefined {
  const part = token.split(".")[1];
  if (part === undefined) return undefined;
  try {
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "="));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === "number" && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export class SessionStore {
  constructor(
    private readonly storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | undefined,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The stored session, or undefined when there is none or it has (nearly) expired. */
  get(): StoredSession | undefined {
    const raw = this.storage?.getItem(KEY);
    if (!raw) return undefined;
    let s: Partial<StoredSession>;
    try {
      s = JSON.parse(raw) as Partial<StoredSession>;
    } catch {
      this.clear();
      return undefined;
    }
    if (typeof s.username !== "string" || typeof s.token !== "string" || typeof s.expiresAtMs !== "number") {
      this.clear();
      return undefined;
    }
    if (s.expiresAtMs - EXPIRY_MARGIN_MS <= this.now()) {
      this.clear();
      return undefined;
    }
    return { username: s.username, token: s.token, expiresAtMs: s.expiresAtMs };
  }

  set(session: StoredSession): void {
    this.storage?.setItem(KEY, JSON.stringify(session));
  }

  clear(): void {
    this.storage?.removeItem(KEY);
  }
}
