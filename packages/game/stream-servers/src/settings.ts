import { type WholeNumberSetting, wholeNumber } from "@flaplab/settings";
import type { StreamLimits } from "./limits.js";

const readBy = "streams";

/** The stream port's limits, one variable each (read by `streamLimitsFromEnv`). */
export const STREAM_LIMIT_SETTINGS: { readonly [K in keyof StreamLimits]: WholeNumberSetting } = {
  handshakeTimeoutMs: wholeNumber({
    name: "FLAPLAB_STREAM_HANDSHAKE_TIMEOUT_MS",
    description: "a connection to the stream port must ask for a session (TLS handshake included) within this, ms",
    default: 10_000,
    min: 100,
    readBy,
  }),
  streamOpenTimeoutMs: wholeNumber({ name: "FLAPLAB_STREAM_OPEN_TIMEOUT_MS", description: "a session must open its stream within this, ms", default: 10_000, min: 100, readBy }),
  idleTimeoutMs: wholeNumber({ name: "FLAPLAB_STREAM_IDLE_TIMEOUT_MS", description: "a session with no traffic for this long is closed, ms", default: 60_000, min: 100, readBy }),
  maxSessions: wholeNumber({ name: "FLAPLAB_STREAM_MAX_SESSIONS", description: "stream sessions open at once (more: 503)", default: 1000, min: 1, readBy }),
  maxSessionsPerPlayer: wholeNumber({
    name: "FLAPLAB_STREAM_MAX_SESSIONS_PER_PLAYER",
    description: "stream sessions of one player; a newer one replaces the oldest (closed 4430)",
    default: 8,
    min: 1,
    readBy,
  }),
  maxSessionsPerAddress: wholeNumber({
    name: "FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS",
    description: "stream sessions from one client address (more: 429); raise it behind a proxy",
    default: 64,
    min: 1,
    readBy,
  }),
};

/** Every variable the stream servers read. */
export const SETTINGS = Object.values(STREAM_LIMIT_SETTINGS);
