export {
  hasPrivateKey,
  keyId,
  keysFromConfig,
  loadKeys,
  loadOrCreateKeys,
  loadPublicKey,
  toPrivateKeyObject,
  toPublicKeyObject,
  PRIVATE_KEY_ENV,
  PRIVATE_KEY_FILE,
  PUBLIC_KEY_ENV,
  PUBLIC_KEY_FILE,
} from "./keys.js";
export type { KeyInput, KeyMaterial, LoadKeysOptions, PublicKeyMaterial } from "./keys.js";
export {
  componentKeyFiles,
  componentPrivateKeyEnv,
  componentPublicKeyEnv,
  loadAllComponentKeys,
  loadComponentKeys,
  RETIRED_SERVICE_KEY_ENV,
  signingKeysOf,
  TICKET_KEY_FILES,
  TICKET_PRIVATE_KEY_ENV,
  TICKET_PUBLIC_KEY_ENV,
  ticketKeyNeed,
  verifyingKeysOf,
} from "./component-keys.js";
export type { ComponentKeys, LoadComponentKeysOptions } from "./component-keys.js";
export {
  createSigner,
  createServiceSigner,
  createVerifier,
  parseBearer,
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  DEFAULT_TTL_SECONDS,
  MAX_TOKEN_LENGTH,
  SERVICE_AUDIENCE_PREFIX,
  serviceAudience,
  SERVICE_TTL_SECONDS,
  TOKEN_ALGORITHM,
} from "./tokens.js";
export type { Principal, ServiceSigner, ServiceSignerOptions, SignedToken, Signer, SignerOptions, TokenVerifier, Verifier, VerifierOptions } from "./tokens.js";
export {
  createStreamAuthorizer,
  createStreamTicketSigner,
  createStreamTicketVerifier,
  STREAM_AUDIENCE,
  STREAM_TICKET_PARAM,
  STREAM_TICKET_TTL_SECONDS,
} from "./stream-tickets.js";
export type {
  StreamTicket,
  StreamTicketSigner,
  StreamTicketSignerOptions,
  StreamTicketVerifier,
  StreamTicketVerifierOptions,
} from "./stream-tickets.js";
export { generateComponentKeys, openLocalIdentity } from "./local.js";
export type { LocalIdentity } from "./local.js";
