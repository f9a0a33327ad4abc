import { type WholeNumberSetting, wholeNumber } from "@flaplab/settings";
import type { AuthLimits } from "./throttle.js";

const readBy = "auth";

/** How hard Register and Login are throttled, one variable each (read by `authLimitsFromEnv`). */
export const AUTH_LIMIT_SETTINGS: { readonly [K in keyof AuthLimits]: WholeNumberSetting } = {
  loginFailsPerUserAddress: wholeNumber({
    name: "FLAPLAB_AUTH_LOGIN_FAILS_PER_USER_ADDRESS",
    description: "failed logins for one account from one address per login window",
    default: 5,
    min: 1,
    readBy,
  }),
  loginFailsPerAddress: wholeNumber({
    name: "FLAPLAB_AUTH_LOGIN_FAILS_PER_ADDRESS",
    description: "failed logins from one address, any accounts, per login window",
    default: 20,
    min: 1,
    readBy,
  }),
  loginWindowSeconds: wholeNumber({ name: "FLAPLAB_AUTH_LOGIN_WINDOW_S", description: "the login window, s", default: 60, min: 1, readBy }),
  loginFailsPerUser: wholeNumber({
    name: "FLAPLAB_AUTH_LOGIN_FAILS_PER_USER",
    description: "failed logins for one account from all addresses per account window",
    default: 30,
    min: 1,
    readBy,
  }),
  loginUserWindowSeconds: wholeNumber({ name: "FLAPLAB_AUTH_LOGIN_USER_WINDOW_S", description: "the account window, s", default: 900, min: 1, readBy }),
  loginsPerUser: wholeNumber({
    name: "FLAPLAB_AUTH_LOGINS_PER_USER",
    description: "logins for one account, right password or wrong, per login window",
    default: 20,
    min: 1,
    readBy,
  }),
  loginsPerAddress: wholeNumber({
    name: "FLAPLAB_AUTH_LOGINS_PER_ADDRESS",
    description: "logins from one address, right password or wrong, per login window",
    default: 60,
    min: 1,
    readBy,
  }),
  registrationsPerAddress: wholeNumber({
    name: "FLAPLAB_AUTH_REGISTRATIONS_PER_ADDRESS",
    description: "registrations from one address per registration window (the tests and `pnpm study` register a handful per server)",
    default: 30,
    min: 1,
    readBy,
  }),
  registrationWindowSeconds: wholeNumber({ name: "FLAPLAB_AUTH_REGISTRATION_WINDOW_S", description: "the registration window, s", default: 600, min: 1, readBy }),
  maxConcurrentHashes: wholeNumber({ name: "FLAPLAB_AUTH_MAX_CONCURRENT_HASHES", description: "password hashes computed at once", default: 2, min: 1, readBy }),
  maxQueuedHashes: wholeNumber({ name: "FLAPLAB_AUTH_MAX_QUEUED_HASHES", description: "hashes waiting for a slot (0: none wait)", default: 4, min: 0, readBy }),
  maxHashesPerAddress: wholeNumber({
    name: "FLAPLAB_AUTH_MAX_HASHES_PER_ADDRESS",
    description: "hashes running or waiting for one client address (raise it behind a proxy)",
    default: 3,
    min: 1,
    readBy,
  }),
  maxHashesPerUser: wholeNumber({ name: "FLAPLAB_AUTH_MAX_HASHES_PER_USER", description: "hashes running or waiting for one account", default: 2, min: 1, readBy }),
};

/** Lifetime of the player tokens auth signs (read by `authTokenTtlFromEnv`). */
export const AUTH_TOKEN_TTL = wholeNumber({
  name: "FLAPLAB_AUTH_TOKEN_TTL_S",
  description: "lifetime of a player token, s; a game started before it expires plays on and is recorded",
  default: 3600,
  min: 1,
  readBy,
});

/** Every variable the auth component reads. */
export const SETTINGS = [...Object.values(AUTH_LIMIT_SETTINGS), AUTH_TOKEN_TTL];
