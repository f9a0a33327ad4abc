export { createStreamServer } from "./server.js";
export type { StreamRoute, StreamServer, StreamServerOptions, TokenVerifier } from "./server.js";
export { createDevCertificate, loadOrCreateDevCertificate, describeCertificate } from "./certificate.js";
export type { StreamCertificate } from "./certificate.js";
export { loadWebTransport } from "./webtransport-lib.js";
