import { AuthConfigError } from "./throttle.js";

/** Lifetime of the player tokens auth signs, seconds (FLAPLAB_AUTH_TOKEN_TTL_S; default 3600). */
export const AUTH_TOKEN_TTL_ENV = "FLAPLAB_AUTH_TOKEN_TTL_S";

/** The player token lifetime set in `env`, or undefined for the default; throws AuthConfigError naming a bad value. */
export function authTokenTtlFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[AUTH_TOKEN_TTL_ENV]?.trim();
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new AuthConfigError(`${AUTH_TOKEN_TTL_ENV} must be a whole number ≥ 1, got "${raw}"`);
  }
  return value;
}
