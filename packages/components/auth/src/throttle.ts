import { Code, ConnectError } from "@connectrpc/connect";
import { defaultsOf, namesOf, readWholeNumbers } from "@flaplab/settings";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { AUTH_LIMIT_SETTINGS } from "./settings.js";

/**
 * How hard Register and Login are throttled. Login attempts are counted before the password is
 * checked (so a burst of parallel guesses is counted at once); the failure limits give an attempt
 * back when the password was right, the login limits (every login, right or wrong) do not. An
 * attempt a limit refuses is given back to the limits it passed before. Addresses are the client's
 * socket address; a call without one (a direct call in the same process) is limited per username only.
 */
export interface AuthLimits {
  /** Failed logins for one username from one address per `loginWindowSeconds` (default 5). */
  readonly loginFailsPerUserAddress: number;
  /** Failed logins from one address, any usernames, per `loginWindowSeconds` (default 20). */
  readonly loginFailsPerAddress: number;
  readonly loginWindowSeconds: number;
  /** Failed logins for one username from all addresses per `loginUserWindowSeconds` (default 30 per 15 min). */
  readonly loginFailsPerUser: number;
  readonly loginUserWindowSeconds: number;
  /** Logins (right password or wrong) for one username per `loginWindowSeconds` (default 20). */
  readonly loginsPerUser: number;
  /** Logins (right password or wrong) from one address per `loginWindowSeconds` (default 60). */
  readonly loginsPerAddress: number;
  /** Registrations (and Register calls for a taken name) from one address per `registrationWindowSeconds` (default 30 per 10 min). */
  readonly registrationsPerAddress: number;
  readonly registrationWindowSeconds: number;
  /** Password hashes computed at once (default 2: scrypt at N=2^17 holds 128 MiB and a libuv thread each). */
  readonly maxConcurrentHashes: number;
  /** Hashes waiting for a slot; beyond it Register and Login answer resource_exhausted at once (default 4). */
  readonly maxQueuedHashes: number;
  /** Hashes running or waiting for one client address (default 3): no address takes every place. */
  readonly maxHashesPerAddress: number;
  /** Hashes running or waiting for one username (default 2). */
  readonly maxHashesPerUser: number;
}

export const DEFAULT_AUTH_LIMITS: AuthLimits = Object.freeze(defaultsOf(AUTH_LIMIT_SETTINGS));

/** The environment variable of each limit (whole numbers; declared in settings.ts). */
export const AUTH_LIMIT_ENV: Readonly<Record<keyof AuthLimits, string>> = Object.freeze(namesOf(AUTH_LIMIT_SETTINGS));

/** A bad FLAPLAB_AUTH_* value or limit. */
export class AuthConfigError extends Error {
  override readonly name = "AuthConfigError";
}

function minimumOf(key: keyof AuthLimits): number {
  return AUTH_LIMIT_SETTINGS[key].min;
}

/** The limits set in `env` (FLAPLAB_AUTH_*); throws AuthConfigError naming a bad value. */
export function authLimitsFromEnv(env: NodeJS.ProcessEnv): Partial<AuthLimits> {
  return readWholeNumbers(env, AUTH_LIMIT_SETTINGS, (message) => new AuthConfigError(message));
}

/** The defaults with `overrides`; throws AuthConfigError for a value that is not a whole number in range. */
export function resolveAuthLimits(overrides: Partial<AuthLimits> = {}): AuthLimits {
  const limits: AuthLimits = { ...DEFAULT_AUTH_LIMITS, ...overrides };
  for (const key of Object.keys(DEFAULT_AUTH_LIMITS) as (keyof AuthLimits)[]) {
    const value = limits[key];
    if (!Number.isSafeInteger(value) || value < minimumOf(key)) {
      throw new AuthConfigError(`auth limit ${key} must be a whole number ≥ ${minimumOf(key)}, got ${value}`);
    }
  }
  return limits;
}

/** The part of a pino logger the auth component uses. */
export interface AuthLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** A ResourceExhausted error carrying a `retry-after` header (whole seconds, at least 1). */
export function tooMany(message: string, retryAfterMs: number): ConnectError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ConnectError(`${message}; try again in ${seconds} s`, Code.ResourceExhausted, { "retry-after": String(seconds) });
}

/** Thrown by `HashGate.run` when every slot and queue place is taken. */
export class GateFullError extends Error {
  override readonly name = "GateFullError";
}

/**
 * Bounds the password hashes computed at once, so that a flood cannot fill the libuv pool (which
 * file and DNS work share) or the memory: `maxActive` run, `maxQueued` wait in order, the rest are
 * refused at once. A hash may name keys (its client address, its username): each key holds at most
 * `maxPerKey(key)` of the running and waiting places, so one address or account never takes all of
 * them and the others' logins still get a place.
 */
export class HashGate {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  private readonly perKey = new Map<string, number>();

  constructor(
    readonly maxActive: number,
    readonly maxQueued: number,
    private readonly maxPerKey: (key: string) => number = () => Number.POSITIVE_INFINITY,
  ) {}

  get running(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Places `key` holds now (running or waiting). */
  held(key: string): number {
    return this.perKey.get(key) ?? 0;
  }

  /**
   * Runs `work` when a slot is free; rejects with GateFullError at once when the queue is full, or
   * when one of `keys` holds its share of the places.
   */
  async run<T>(work: () => Promise<T>, keys: readonly string[] = []): Promise<T> {
    for (const key of keys) {
      if (this.held(key) >= this.maxPerKey(key)) throw new GateFullError("too many password checks in progress for one client");
    }
    if (this.active >= this.maxActive && this.queue.length >= this.maxQueued) throw new GateFullError("too many password checks in progress");
    for (const key of keys) this.perKey.set(key, this.held(key) + 1);
    try {
      if (this.active >= this.maxActive) await new Promise<void>((resolve) => this.queue.push(resolve));
      else this.active++;
      try {
        return await work();
      } finally {
        const next = this.queue.shift();
        // The slot passes straight to the next waiter.
        if (next) next();
        else this.active--;
      }
    } finally {
      for (const key of keys) {
        const n = this.held(key) - 1;
        if (n > 0) this.perKey.set(key, n);
        else this.perKey.delete(key);
      }
    }
  }
}

type Limit = "user-address" | "address" | "user" | "logins-user" | "logins-address" | "registrations";

const MESSAGES: Record<Limit, string> = {
  "user-address": "too many failed logins for this user from your address",
  address: "too many failed logins from your address",
  user: "too many failed logins for this user",
  "logins-user": "too many logins for this user",
  "logins-address": "too many logins from your address",
  registrations: "too many registrations from your address",
};

/** Throttled calls are logged at most this often per limit (the first at once), with a count. */
const LOG_INTERVAL_MS = 5_000;

/** One login attempt that passed the limits: settle it once its password was checked. */
export interface LoginAttempt {
  /** The password was right: the attempt no longer counts as a failure. */
  succeeded(): Promise<void>;
  /** The password was not checked (the server was busy): give the attempt back. */
  cancelled(): Promise<void>;
}

/** Per-address and per-username limits on Register and Login (in memory, per process). */
export class AuthThrottle {
  private readonly userAddress: RateLimiterMemory;
  private readonly address: RateLimiterMemory;
  private readonly user: RateLimiterMemory;
  private readonly loginsUser: RateLimiterMemory;
  private readonly loginsAddress: RateLimiterMemory;
  private readonly registrations: RateLimiterMemory;
  private readonly logged = new Map<Limit, { atMs: number; unlogged: number }>();

  constructor(
    limits: AuthLimits,
    private readonly logger?: AuthLogger,
  ) {
    this.userAddress = new RateLimiterMemory({
      keyPrefix: "login-user-address",
      points: limits.loginFailsPerUserAddress,
      duration: limits.loginWindowSeconds,
    });
    this.address = new RateLimiterMemory({
      keyPrefix: "login-address",
      points: limits.loginFailsPerAddress,
      duration: limits.loginWindowSeconds,
    });
    this.user = new RateLimiterMemory({
      keyPrefix: "login-user",
      points: limits.loginFailsPerUser,
      duration: limits.loginUserWindowSeconds,
    });
    this.loginsUser = new RateLimiterMemory({
      keyPrefix: "logins-user",
      points: limits.loginsPerUser,
      duration: limits.loginWindowSeconds,
    });
    this.loginsAddress = new RateLimiterMemory({
      keyPrefix: "logins-address",
      points: limits.loginsPerAddress,
      duration: limits.loginWindowSeconds,
    });
    this.registrations = new RateLimiterMemory({
      keyPrefix: "register-address",
      points: limits.registrationsPerAddress,
      duration: limits.registrationWindowSeconds,
    });
  }

  /**
   * Counts a login attempt for `username` from `address` (undefined: no address), or throws
   * ResourceExhausted with `retry-after` when a limit is reached; the limits it passed before the
   * one that refused get it back. Usernames are compared ignoring ASCII case, as accounts are.
   */
  async beginLogin(username: string, address: string | undefined): Promise<LoginAttempt> {
    const name = username.toLowerCase();
    // [limit, limiter, key, counts failures only (given back on success)]
    const steps: Array<[Limit, RateLimiterMemory, string, boolean]> = [];
    if (address !== undefined) steps.push(["logins-address", this.loginsAddress, address, false], ["address", this.address, address, true]);
    steps.push(
      ["user-address", this.userAddress, `${name}|${address ?? ""}`, true],
      ["user", this.user, name, true],
      ["logins-user", this.loginsUser, name, false],
    );
    const consumed: Array<[RateLimiterMemory, string, boolean]> = [];
    const giveBack = async (which: (failuresOnly: boolean) => boolean) => {
      await Promise.all(consumed.filter(([, , f]) => which(f)).map(([limiter, key]) => limiter.reward(key, 1)));
    };
    for (const [limit, limiter, key, failuresOnly] of steps) {
      try {
        await this.consume(limit, limiter, key, { username: name, address });
      } catch (err) {
        // Refused here: the attempt was never made, so it counts nowhere (a refusing limiter
        // counted it too: given back, so that refusals never outlast the failures they follow).
        if (err instanceof ConnectError) await limiter.reward(key, 1);
        await giveBack(() => true);
        throw err;
      }
      consumed.push([limiter, key, failuresOnly]);
    }
    return { succeeded: () => giveBack((f) => f), cancelled: () => giveBack(() => true) };
  }

  /** Counts a registration from `address`, or throws ResourceExhausted; no limit without an address. */
  async beginRegistration(address: string | undefined): Promise<{ cancelled(): Promise<void> }> {
    if (address === undefined) return { cancelled: async () => undefined };
    await this.consume("registrations", this.registrations, address, { address });
    return {
      cancelled: async () => {
        await this.registrations.reward(address, 1);
      },
    };
  }

  private async consume(limit: Limit, limiter: RateLimiterMemory, key: string, fields: object): Promise<void> {
    try {
      await limiter.consume(key, 1);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      this.log(limit, fields, err.msBeforeNext);
      throw tooMany(MESSAGES[limit], err.msBeforeNext);
    }
  }

  private log(limit: Limit, fields: object, retryAfterMs: number): void {
    const now = Date.now();
    const last = this.logged.get(limit);
    if (last && now - last.atMs < LOG_INTERVAL_MS) {
      last.unlogged++;
      return;
    }
    this.logger?.warn(
      { event: "auth-throttled", limit, ...fields, retryAfterMs, alsoThrottled: last?.unlogged ?? 0 },
      MESSAGES[limit],
    );
    this.logged.set(limit, { atMs: now, unlogged: 0 });
  }
}
