export { createHost } from "./host.js";
export type { Host, HostedRuntime, HostOptions } from "./host.js";
export type { UpgradeHandler } from "./dual-protocol-server.js";
export {
  CORS_ORIGINS_ENV,
  corsOriginsFromEnv,
  DEFAULT_HOST_LIMITS,
  defaultCorsOrigins,
  HOST_LIMIT_ENV,
  HostConfigError,
  hostLimitsFromEnv,
  resolveHostLimits,
} from "./config.js";
export type { HostLimits } from "./config.js";
export type { HostStats } from "./host.js";
export { SHED_MESSAGE } from "./admission.js";
