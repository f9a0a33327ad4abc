import { defaultsOf, minimumsOf, namesOf, readWholeNumbers } from "@flaplab/settings";
import { STREAM_LIMIT_SETTINGS } from "./settings.js";
/** Limits of the stream port. Defaults, then FLAPLAB_STREAM_* environment overrides (settings.ts), then options. */
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

export const DEFAULT_STREAM_LIMITS: StreamLimits = Object.freeze(defaultsOf(STREAM_LIMIT_SETTINGS));

export const STREAM_LIMIT_ENV: Readonly<Record<keyof StreamLimits, string>> = Object.freeze(namesOf(STREAM_LIMIT_SETTINGS));

const MINIMUM: Readonly<Record<keyof StreamLimits, number>> = minimumsOf(STREAM_LIMIT_SETTINGS);

export class StreamConfigError extends Error {
  override name = "StreamConfigError";
}

/** The FLAPLAB_STREAM_* variables that are set; throws StreamConfigError for a value that is not a whole number ≥ its minimum. */
export function streamLimitsFromEnv(env: NodeJS.ProcessEnv): Partial<StreamLimits> {
  return readWholeNumbers(env, STREAM_LIMIT_SETTINGS, (message) => new StreamConfigError(message));
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
