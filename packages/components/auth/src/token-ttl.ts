import { readWholeNumber } from "@flaplab/settings";
import { AUTH_TOKEN_TTL } from "./settings.js";
import { AuthConfigError } from "./throttle.js";

/** Lifetime of the player tokens auth signs, seconds (FLAPLAB_AUTH_TOKEN_TTL_S; default 3600). */
export const AUTH_TOKEN_TTL_ENV = AUTH_TOKEN_TTL.name;

/** The player token lifetime set in `env`, or undefined for the default; throws AuthConfigError naming a bad value. */
export function authTokenTtlFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  return readWholeNumber(env, AUTH_TOKEN_TTL, (message) => new AuthConfigError(message));
}
