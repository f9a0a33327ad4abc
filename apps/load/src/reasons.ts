// Why a bot game failed, in a few words a summary can count: a refusal by one of the servers'
// limits names the setting that sets it, so a user knows what to raise.
import { Code, ConnectError } from "@connectrpc/connect";
import { StreamOpenError } from "@flaplab/game-client";

/** The servers' refusals, by the text they answer with, and the setting behind each. */
const LIMITS: ReadonlyArray<readonly [RegExp, string]> = [
  [/too many registrations from your address/, "FLAPLAB_AUTH_REGISTRATIONS_PER_ADDRESS"],
  [/too many logins from your address/, "FLAPLAB_AUTH_LOGINS_PER_ADDRESS"],
  [/too many logins for this user/, "FLAPLAB_AUTH_LOGINS_PER_USER"],
  [/too many failed logins/, "FLAPLAB_AUTH_LOGIN_FAILS_PER_ADDRESS"],
  [/busy checking other passwords/, "FLAPLAB_AUTH_MAX_CONCURRENT_HASHES / FLAPLAB_AUTH_MAX_QUEUED_HASHES / FLAPLAB_AUTH_MAX_HASHES_PER_ADDRESS"],
  [/already has \d+ games in progress/, "FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER"],
  [/engine already holds \d+ games/, "FLAPLAB_ENGINE_MAX_GAMES"],
  [/server overloaded: too many calls in progress/, "FLAPLAB_MAX_CONCURRENT_CALLS / FLAPLAB_MAX_QUEUED_CALLS / FLAPLAB_MAX_CALLS_PER_ADDRESS / FLAPLAB_MAX_CALLS_PER_CONNECTION"],
  [/too many stream sessions from your address/, "FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS"],
  [/HTTP 429/, "FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS"],
  [/HTTP 503/, "FLAPLAB_STREAM_MAX_SESSIONS"],
];

/** The reason of a limit's refusal, or undefined when `text` is not one. */
export function limitReason(text: string): string | undefined {
  for (const [pattern, setting] of LIMITS) if (pattern.test(text)) return `refused by a limit (${setting})`;
  return undefined;
}

/** The reason a call (register, login, StartGame) or a stream's opening failed. */
export function errorReason(step: "register" | "login" | "start-game" | "open", err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const limit = limitReason(text);
  if (limit) return limit;
  if (err instanceof StreamOpenError) return /not open after/.test(text) ? "timeout (stream open)" : "stream error (open refused)";
  if (err instanceof ConnectError) {
    if (err.code === Code.DeadlineExceeded) return `timeout (${step})`;
    if (err.code === Code.ResourceExhausted) return `refused (${step}: resource exhausted)`;
    return `${step} failed (${Code[err.code]})`;
  }
  return `${step} failed`;
}

/** The reason a played game did not end normally, from the client's outcome text. */
export function outcomeReason(error: string): string {
  const limit = limitReason(error);
  if (limit) return limit;
  if (/could not be resumed/.test(error)) return "resume failed";
  if (/^game stream (failed|closed)|ended before the game was over|not sent/.test(error)) return "stream error";
  if (/bad message/.test(error)) return "stream error (bad message)";
  return "stream error";
}

export const SCORE_MISMATCH = "score differs from the simulator";
export const UNFINISHED = "unfinished at drain";
