import type { KeyObject } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { isComponentName, type ComponentName, type Principal } from "@flaplab/component";
import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTHeaderParameters, type JWTPayload } from "jose";
import { keyId, toPrivateKeyObject, toPublicKeyObject, type KeyInput } from "./keys.js";

export type { Principal };

export const DEFAULT_ISSUER = "flaplab";
export const DEFAULT_AUDIENCE = "flaplab";
/** The audience prefix of component credentials: one component's credential for another names it, `flaplab-service:<callee>`. */
export const SERVICE_AUDIENCE_PREFIX = "flaplab-service:";

/** The audience of a component credential for calls to `callee`. */
export function serviceAudience(callee: ComponentName): string {
  return `${SERVICE_AUDIENCE_PREFIX}${callee}`;
}
/** Lifetime of a component credential; a signer renews it when half of it has passed. */
export const SERVICE_TTL_SECONDS = 300;
export const DEFAULT_TTL_SECONDS = 3600;
/** The only accepted signature algorithm (Ed25519). */
export const TOKEN_ALGORITHM = "EdDSA";
/** Longer strings are rejected before any parsing. */
export const MAX_TOKEN_LENGTH = 4096;

export interface SignedToken {
  readonly token: string;
  readonly expiresAt: Date;
}

export interface Signer {
  sign(username: string): Promise<SignedToken>;
}

export interface SignerOptions {
  readonly privateKey: KeyInput;
  /** Defaults to the RFC 7638 thumbprint of the public key. */
  readonly kid?: string | undefined;
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  readonly ttlSeconds?: number | undefined;
  /** Clock in epoch milliseconds (tests). Defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/** Signs EdDSA JWTs with claims sub = username, username, iat, exp, iss, aud and a `kid` header. */
export function createSigner(opts: SignerOptions): Signer {
  const key = toPrivateKeyObject(opts.privateKey);
  // The `kid` header put on every token.
  const kidOf = opts.kid !== undefined ? Promise.resolve(opts.kid) : keyId(key);
  const issuer = opts.issuer ?? DEFAULT_ISSUER;
  const audience = opts.audience ?? DEFAULT_AUDIENCE;
  const ttl = opts.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  const now = opts.now ?? Date.now;
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error(`ttlSeconds must be a positive integer, got ${ttl}`);

  return {
    async sign(username: string): Promise<SignedToken> {
      if (typeof username !== "string" || username.length === 0) {
        throw new Error("cannot sign a token for an empty username");
      }
      const kid = await kidOf;
      const iat = Math.floor(now() / 1000);
      const exp = iat + ttl;
      const token = await new SignJWT({ username })
        .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: "JWT", kid })
        .setSubject(username)
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(key);
      return { token, expiresAt: new Date(exp * 1000) };
    },
  };
}

/** What checks a bearer token, as the runtime's guard and the stream server need it. */
export interface TokenVerifier {
  /** The verified principal, or a ConnectError with Code.Unauthenticated saying why not. */
  verify(token: string): Promise<Principal>;
  /** The principal of a token verified before and not yet expired, without waiting (optional: a fast path). */
  cached?(token: string): Principal | undefined;
}

export interface Verifier extends TokenVerifier {
  /** The principal of a token verified before and not yet expired, without waiting; else undefined. */
  cached(token: string): Principal | undefined;
}

export interface VerifierOptions {
  readonly publicKey: KeyInput;
  /**
   * The components' public keys. With them, component credentials are accepted too: signed by
   * the key of the component they name (`svc`), for one callee (audience `flaplab-service:<callee>`).
   * Their principal names the calling component in `service`, the callee in `callee` and the
   * player it acts for in `username` ("" for none).
   */
  readonly componentKeys?: ReadonlyMap<ComponentName, KeyInput> | undefined;
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  readonly clockToleranceSec?: number | undefined;
  /** Successful verifications kept until their expiry; 0 disables the cache. */
  readonly cacheSize?: number | undefined;
  /** Clock in epoch milliseconds (tests). Defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
}

function unauthenticated(reason: string, cause?: unknown): ConnectError {
  return new ConnectError(`invalid token: ${reason}`, Code.Unauthenticated, undefined, undefined, cause);
}

class KeyMismatch extends Error {}

function headerAlg(token: string): string {
  try {
    return String(decodeProtectedHeader(token).alg);
  } catch {
    return "unknown";
  }
}

function describeFailure(err: unknown, token: string): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof KeyMismatch) return unauthenticated(err.message, err);
  if (err instanceof errors.JWTExpired) return unauthenticated("expired", err);
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return unauthenticated("wrong issuer", err);
    if (err.claim === "aud") return unauthenticated("wrong audience", err);
    if (err.claim === "nbf") return unauthenticated("not valid yet", err);
    return unauthenticated(`bad claim "${err.claim}" (${err.message})`, err);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return unauthenticated("bad signature", err);
  if (err instanceof errors.JOSEAlgNotAllowed) {
    return unauthenticated(`algorithm ${headerAlg(token)} not allowed (only ${TOKEN_ALGORITHM})`, err);
  }
  return unauthenticated("malformed", err);
}

/**
 * The cache key of a token: the end of its signature. A header's token is a new string on every
 * request, and hashing a whole JWT for the map costs more than the rest of a cached check; a hit is
 * confirmed by comparing the whole token.
 */
function cacheKeyOf(token: string): string {
  return token.length > 32 ? token.slice(-32) : token;
}

interface CacheEntry {
  readonly principal: Principal;
  /** Last epoch millisecond at which the token still counts as unexpired. */
  readonly validUntilMs: number;
}

/**
 * Verifies EdDSA JWTs locally with the public key. Only EdDSA is accepted, so `alg: none` and
 * HMAC tokens made with the public key as secret are rejected. Successful results are cached by
 * token string until the token expires; failures are never cached.
 */
export function createVerifier(opts: VerifierOptions): Verifier {
  const key: KeyObject = toPublicKeyObject(opts.publicKey);
  const componentKeys = [...(opts.componentKeys ?? new Map<ComponentName, KeyInput>())].map(([component, k]) => [component, toPublicKeyObject(k)] as const);
  // The keys' ids, known after the first verification starts.
  const kidsOf = Promise.all([keyId(key), Promise.all(componentKeys.map(async ([component, k]) => [await keyId(k), { component, key: k }] as const))]);
  let kid = "";
  /** kid → the component whose key it is. */
  let componentByKid = new Map<string, { readonly component: ComponentName; readonly key: KeyObject }>();
  const issuer = opts.issuer ?? DEFAULT_ISSUER;
  const audience = opts.audience ?? DEFAULT_AUDIENCE;
  const tolerance = opts.clockToleranceSec ?? 5;
  const cacheSize = opts.cacheSize ?? 10_000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, CacheEntry>();

  const resolveKey = (header: JWTHeaderParameters): KeyObject => {
    const signer = header.kid !== undefined ? componentByKid.get(header.kid) : undefined;
    if (signer !== undefined) return signer.key;
    if (header.kid !== undefined && header.kid !== kid) {
      throw new KeyMismatch(`signed by an unknown key (kid ${String(header.kid)})`);
    }
    return key;
  };

  return {
    cached(token: string): Principal | undefined {
      if (typeof token !== "string") return undefined;
      const hit = cache.get(cacheKeyOf(token));
      return hit !== undefined && hit.principal.token === token && now() <= hit.validUntilMs ? hit.principal : undefined;
    },
    async verify(token: string): Promise<Principal> {
      if (typeof token !== "string" || token.length === 0) throw unauthenticated("empty");
      const nowMs = now();
      const key = cacheKeyOf(token);
      const hit = cache.get(key);
      if (hit !== undefined && hit.principal.token === token) {
        if (nowMs <= hit.validUntilMs) return hit.principal;
        cache.delete(key);
      }
      if (token.length > MAX_TOKEN_LENGTH) throw unauthenticated("malformed (too long)");
      if (kid === "") {
        const [playerKid, byKid] = await kidsOf;
        componentByKid = new Map(byKid);
        kid = playerKid;
      }

      let payload: JWTPayload;
      let protectedHeader: JWTHeaderParameters;
      try {
        ({ payload, protectedHeader } = await jwtVerify(token, resolveKey, {
          algorithms: [TOKEN_ALGORITHM],
          issuer,
          clockTolerance: tolerance,
          currentDate: new Date(nowMs),
          requiredClaims: ["exp"],
        }));
      } catch (err) {
        throw describeFailure(err, token);
      }
      // requiredClaims guarantees exp; jose has checked it is a number.
      const exp = payload.exp as number;
      // The audience is checked here, not by jose: a component credential's names its callee.
      const audiences = typeof payload.aud === "string" ? [payload.aud] : (payload.aud ?? []);
      let principal: Principal;
      const signer = protectedHeader.kid !== undefined ? componentByKid.get(protectedHeader.kid) : undefined;
      if (signer !== undefined) {
        // A component credential: one callee as audience, and the component whose key signed it.
        const callee = audiences.length === 1 ? audiences[0]!.slice(SERVICE_AUDIENCE_PREFIX.length) : "";
        if (audiences.length !== 1 || !audiences[0]!.startsWith(SERVICE_AUDIENCE_PREFIX) || !isComponentName(callee)) {
          throw unauthenticated("wrong audience");
        }
        const service = payload["svc"];
        if (typeof service !== "string" || service.length === 0) throw unauthenticated("missing calling component");
        if (service !== signer.component) throw unauthenticated(`signed with the key of ${signer.component}, not of ${service}`);
        const username = payload.sub ?? "";
        principal = Object.freeze({ username, token, expiresAt: new Date(exp * 1000), service, callee });
      } else {
        // A player token must not be usable where a component credential is expected, and back.
        if (!audiences.includes(audience) || audiences.some((a) => a.startsWith(SERVICE_AUDIENCE_PREFIX))) throw unauthenticated("wrong audience");
        const username = payload["username"];
        if (typeof username !== "string" || username.length === 0) throw unauthenticated("missing username");
        if (payload.sub !== undefined && payload.sub !== username) {
          throw unauthenticated("subject and username differ");
        }
        principal = Object.freeze({ username, token, expiresAt: new Date(exp * 1000) });
      }

      if (cacheSize > 0) {
        if (cache.size >= cacheSize) {
          // Evict the oldest entry (Map iterates in insertion order).
          const oldest = cache.keys().next();
          if (!oldest.done) cache.delete(oldest.value);
        }
        // jose accepts while exp > now - tolerance (whole seconds); mirror that.
        cache.set(key, { principal, validUntilMs: (exp + tolerance) * 1000 - 1 });
      }
      return principal;
    },
  };
}

/** The token of an `Authorization: Bearer <token>` header, or Unauthenticated "missing bearer token". */
export function parseBearer(header: string | null | undefined): string {
  if (header === null || header === undefined || header.trim() === "") {
    throw new ConnectError("missing bearer token", Code.Unauthenticated);
  }
  // The common form, "Bearer <token>", without a regular expression.
  if (header.startsWith("Bearer ") && header.length > 7 && header.indexOf(" ", 7) === -1 && !/\s/.test(header.slice(-1))) {
    return header.slice(7);
  }
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new ConnectError("missing bearer token (expected 'Authorization: Bearer <token>')", Code.Unauthenticated);
  }
  return match[1];
}

/** Mints the credentials a component sends with its calls to other components. */
export interface ServiceSigner {
  /**
   * A credential of `component` for calls to `callee`, acting for `username` (none for work no
   * player started), valid for a few minutes; the same one is returned until half of its lifetime
   * has passed. Throws when this signer holds no key of `component`.
   */
  tokenFor(component: ComponentName, callee: ComponentName, username: string | undefined): string | Promise<string>;
}

export interface ServiceSignerOptions {
  /** The private key of each component whose calls it signs (`loadComponentKeys`'s `signing`). */
  readonly keys: ReadonlyMap<ComponentName, KeyInput>;
  readonly issuer?: string | undefined;
  readonly ttlSeconds?: number | undefined;
  /** Credentials kept for reuse (default 10,000). */
  readonly cacheSize?: number | undefined;
  /** Clock in epoch milliseconds (tests). Defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
}

interface MintedCredential {
  readonly token: string;
  /** Epoch ms after which a new one is minted. */
  readonly renewAtMs: number;
}

/**
 * Signs component credentials: EdDSA JWTs with the calling component's own key, audience
 * `flaplab-service:<callee>`, `svc` = the calling component and `sub` = the player it acts for.
 * They are short-lived and kept per (component, callee, player) until half their lifetime has
 * passed, so a call costs a map lookup; a player's own token never travels between components,
 * and a run is recorded even after the player's token has expired.
 */
export function createServiceSigner(opts: ServiceSignerOptions): ServiceSigner {
  const keys = new Map([...opts.keys].map(([component, k]) => {
    const key = toPrivateKeyObject(k);
    return [component, { key, kid: keyId(key) }] as const;
  }));
  const issuer = opts.issuer ?? DEFAULT_ISSUER;
  const ttl = opts.ttlSeconds ?? SERVICE_TTL_SECONDS;
  const cacheSize = opts.cacheSize ?? 10_000;
  const now = opts.now ?? Date.now;
  if (!Number.isInteger(ttl) || ttl <= 1) throw new Error(`ttlSeconds must be an integer above 1, got ${ttl}`);
  const cache = new Map<string, MintedCredential>();
  const pending = new Map<string, Promise<string>>();

  async function mint(cacheKey: string, component: ComponentName, callee: ComponentName, username: string | undefined): Promise<string> {
    const signing = keys.get(component)!;
    const kid = await signing.kid;
    const iat = Math.floor(now() / 1000);
    const jwt = new SignJWT({ svc: component })
      .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: "JWT", kid })
      .setIssuer(issuer)
      .setAudience(serviceAudience(callee))
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl);
    if (username !== undefined && username !== "") jwt.setSubject(username);
    const token = await jwt.sign(signing.key);
    if (cache.size >= cacheSize) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(cacheKey, { token, renewAtMs: (iat + ttl / 2) * 1000 });
    return token;
  }

  return {
    tokenFor(component, callee, username) {
      if (!keys.has(component)) throw new Error(`no key of component ${String(component)} here: a process signs only for the components it runs`);
      if (!isComponentName(callee)) throw new Error(`a component credential names its callee, a component; got ${String(callee)}`);
      const cacheKey = `${component}\u0000${callee}\u0000${username ?? ""}`;
      const hit = cache.get(cacheKey);
      if (hit !== undefined && now() < hit.renewAtMs) return hit.token;
      let p = pending.get(cacheKey);
      if (p === undefined) {
        p = mint(cacheKey, component, callee, username).finally(() => pending.delete(cacheKey));
        pending.set(cacheKey, p);
      }
      return p;
    },
  };
}
