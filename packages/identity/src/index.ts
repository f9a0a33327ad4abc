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
  createSigner,
  createVerifier,
  parseBearer,
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  DEFAULT_TTL_SECONDS,
  MAX_TOKEN_LENGTH,
  TOKEN_ALGORITHM,
} from "./tokens.js";
export type { Principal, SignedToken, Signer, SignerOptions, Verifier, VerifierOptions } from "./tokens.js";
