import { wholeNumbersFromEnv } from "@flaplab/component";
/** Limits of the stream port. Defaults, then FLAPLAB_STREAM_* environment overrides, then options. */
export interface StreamLimits {
  /** A connection that has not asked for a session this long after connecting (TLS handshake included) is closed. */
  readonly handshakeTimeoutMs: number;
  /** How long a client has to open its stream after the session is up. */
  readonly streamOpenTimeoutMs: number;
  /** A session with no bytes either way for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Sessions open at once; more are refused with 503. */
  readonly maxSessions: number;
  /** Sessions of one player (the stream ticket's); a newer one replaces the oldest (closed 4430). */
  readonly maxSessionsPerPlayer: number;
  /** Sessions from one client address; more are refused (429, or closed 4430). */
  readonly maxSessionsPerAddress: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = Object.freeze({
  handshakeTimeoutMs: 10_000,
  streamOpenTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  maxSessions: 1000,
  maxSessionsPerPlayer: 8,
  maxSessionsPerAddress: 64,
});

export const STREAM_LIMIT_ENV: Readonly<Record<keyof StreamLimits, string>> = Object.freeze({
  handshakeTimeoutMs: "FLAPLAB_STREAM_HANDSHAKE_TIMEOUT_MS",
  streamOpenTimeoutMs: "FLAPLAB_STREAM_OPEN_TIMEOUT_MS",
  idleTimeoutMs: "FLAPLAB_STREAM_IDLE_TIMEOUT_MS",
  maxSessions: "FLAPLAB_STREAM_MAX_SESSIONS",
  maxSessionsPerPlayer: "FLAPLAB_STREAM_MAX_SESSIONS_PER_PLAYER",
  maxSessionsPerAddress: "FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS",
});

const MINIMUM: Readonly<Record<keyof StreamLimits, number>> = { handshakeTimeoutMs: 100, streamOpenTimeoutMs: 100, idleTimeoutMs: 100, maxSessions: 1, maxSessionsPerPlayer: 1, maxSessionsPerAddress: 1 };

export class StreamConfigError extends Error {
  override name = "StreamConfigError";
}

/** The FLAPLAB_STREAM_* variables that are set; throws StreamConfigError for a value that is not a whole number ≥ its minimum. */
export function streamLimitsFromEnv(env: NodeJS.ProcessEnv): Partial<StreamLimits> {
  return wholeNumbersFromEnv(env, STREAM_LIMIT_ENV, (key) => MINIMUM[key], (message) => new StreamConfigError(message));
}

/** Defaults overridden by `partial` (undefined fields keep the default). */
export function resolveStreamLimits(partial: Partial<StreamLimits> = {}): StreamLimits {
  const out: Record<keyof StreamLimits, number> = { ...DEFAULT_STREAM_LIMITS };
  for (const key of Object.keys(DEFAULT_STREAM_LIMITS) as (keyof StreamLimits)[]) {
    const v = partial[key];
    if (v !== undefined) {
      if (!Number.isSafeInteger(v) || v < MINIMUM[key]) throw new StreamConfigError(`stream limit ${key} must be a whole number ≥ ${MINIMUM[key]}, got ${v}`);
      out[key] = v;
    }
  }
  return Object.freeze(out);
}
