export { createStreamServer, tokenAuthorizer, STREAM_TOKEN_PARAM } from "./server.js";
export type { StreamAuthorizer, StreamRoute, StreamServer, StreamServerOptions } from "./server.js";
export type { TokenVerifier } from "@flaplab/identity";
export { DEFAULT_STREAM_LIMITS, STREAM_LIMIT_ENV, StreamConfigError, resolveStreamLimits, streamLimitsFromEnv } from "./limits.js";
export type { StreamLimits } from "./limits.js";
export { createDevCertificate, loadOrCreateDevCertificate, describeCertificate } from "./certificate.js";
export type { StreamCertificate } from "./certificate.js";
export { loadWebTransport } from "./webtransport-lib.js";
