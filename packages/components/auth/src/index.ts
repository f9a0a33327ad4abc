export { authComponent, createAuth, DEFAULT_PASSWORD_POLICY, INVALID_CREDENTIALS, USERNAME_PATTERN } from "./auth.js";
export type { AuthDeps, PasswordPolicy } from "./auth.js";
export { checkScryptParams, DEFAULT_SCRYPT_PARAMS, hashPassword, scryptMaxmem, verifyPassword } from "./password.js";
export type { ScryptParams } from "./password.js";
export { createMemoryUserStore, openUserStore, USER_DB_FILE } from "./store.js";
export type { UserRecord, UserStore } from "./store.js";
export {
  AUTH_LIMIT_ENV,
  AuthConfigError,
  AuthThrottle,
  authLimitsFromEnv,
  DEFAULT_AUTH_LIMITS,
  GateFullError,
  HashGate,
  resolveAuthLimits,
} from "./throttle.js";
export type { AuthLimits, AuthLogger, LoginAttempt } from "./throttle.js";
export { AUTH_TOKEN_TTL_ENV, authTokenTtlFromEnv } from "./token-ttl.js";
