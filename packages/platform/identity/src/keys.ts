import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  KeyObject,
  randomBytes,
  type webcrypto,
} from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { link, mkdir, open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { readText } from "@flaplab/settings";
import { calculateJwkThumbprint } from "jose";
import { JWT_PRIVATE_KEY, JWT_PUBLIC_KEY } from "./settings.js";

/** A public key only: enough to verify tokens. */
export interface PublicKeyMaterial {
  /** RFC 7638 thumbprint of the public key; sent as the `kid` header of every token. */
  readonly kid: string;
  readonly publicKey: KeyObject;
  /** SPKI PEM of the public key. */
  readonly publicKeyPem: string;
}

/** A full Ed25519 key pair: enough to sign and to verify tokens. */
export interface KeyMaterial extends PublicKeyMaterial {
  readonly privateKey: KeyObject;
  /** PKCS#8 PEM of the private key. */
  readonly privateKeyPem: string;
}

/** Anything a signer or verifier accepts as a key: a Node KeyObject, a WebCrypto CryptoKey or PEM text. */
export type KeyInput = KeyObject | webcrypto.CryptoKey | string;

export const PRIVATE_KEY_FILE = "jwt-ed25519.key.pem";
export const PUBLIC_KEY_FILE = "jwt-ed25519.pub.pem";
export const PRIVATE_KEY_ENV = JWT_PRIVATE_KEY.name;
export const PUBLIC_KEY_ENV = JWT_PUBLIC_KEY.name;
export function hasPrivateKey(keys: PublicKeyMaterial): keys is KeyMaterial {
  return (keys as Partial<KeyMaterial>).privateKey !== undefined;
}

/** PEM from an environment variable may carry literal "\n" sequences instead of newlines. */
function normalizePem(pem: string): string {
  const text = pem.includes("\\n") && !pem.includes("\n") ? pem.replace(/\\n/g, "\n") : pem;
  return `${text.trim()}\n`;
}

function assertEd25519(key: KeyObject, what: string): void {
  if (key.asymmetricKeyType !== "ed25519") {
    throw new Error(`${what} must be an Ed25519 key, got ${key.asymmetricKeyType ?? key.type}`);
  }
}

/** The private KeyObject behind any accepted key input. */
export function toPrivateKeyObject(input: KeyInput): KeyObject {
  let key: KeyObject;
  if (typeof input === "string") key = createPrivateKey(normalizePem(input));
  else if (input instanceof KeyObject) key = input;
  else key = KeyObject.from(input);
  if (key.type !== "private") throw new Error(`signing key must be a private key, got a ${key.type} key`);
  assertEd25519(key, "signing key");
  return key;
}

/** The public KeyObject behind any accepted key input (a private key yields its public half). */
export function toPublicKeyObject(input: KeyInput): KeyObject {
  let key: KeyObject;
  if (typeof input === "string") key = createPublicKey(normalizePem(input));
  else if (input instanceof KeyObject) key = input;
  else key = KeyObject.from(input);
  if (key.type === "private") key = createPublicKey(key);
  if (key.type !== "public") throw new Error(`verification key must be a public key, got a ${key.type} key`);
  assertEd25519(key, "verification key");
  return key;
}

/**
 * RFC 7638 thumbprint (SHA-256, base64url) of an Ed25519 key's public half (jose's
 * `calculateJwkThumbprint`). A key that is not Ed25519 throws at once, before anything is awaited.
 */
export function keyId(key: KeyInput): Promise<string> {
  const jwk = toPublicKeyObject(key).export({ format: "jwk" });
  return calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, "sha256");
}

export async function publicMaterial(publicKey: KeyObject): Promise<PublicKeyMaterial> {
  return {
    kid: await keyId(publicKey),
    publicKey,
    publicKeyPem: publicKey.export({ format: "pem", type: "spki" }).toString(),
  };
}

export async function fullMaterial(privateKey: KeyObject): Promise<KeyMaterial> {
  const pub = await publicMaterial(createPublicKey(privateKey));
  return {
    ...pub,
    privateKey,
    privateKeyPem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
  };
}

/**
 * Keys from PEM text. With a private key the public key is derived from it (and must match
 * `publicKeyPem` when both are given); with only a public key the result can verify but not sign.
 */
export async function keysFromConfig(cfg: { privateKeyPem: string; publicKeyPem?: string | undefined }): Promise<KeyMaterial>;
export async function keysFromConfig(cfg: {
  privateKeyPem?: string | undefined;
  publicKeyPem?: string | undefined;
}): Promise<KeyMaterial | PublicKeyMaterial>;
export async function keysFromConfig(cfg: {
  privateKeyPem?: string | undefined;
  publicKeyPem?: string | undefined;
}): Promise<KeyMaterial | PublicKeyMaterial> {
  if (cfg.privateKeyPem) {
    const keys = await fullMaterial(toPrivateKeyObject(cfg.privateKeyPem));
    if (cfg.publicKeyPem) {
      const given = await keyId(cfg.publicKeyPem);
      if (given !== keys.kid) throw new Error("the configured public key does not belong to the configured private key");
    }
    return keys;
  }
  if (cfg.publicKeyPem) return await publicMaterial(toPublicKeyObject(cfg.publicKeyPem));
  throw new Error("no key configured: give a private key, a public key or both");
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as NodeJS.ErrnoException).code === code;
}

export async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if (isErrno(err, "ENOENT")) return undefined;
    throw err;
  }
}

/**
 * Publishes `content` at `path` unless a file is already there. The content is written and
 * fsynced under a unique temporary name first, then hard-linked into place: `link` fails with
 * EEXIST when another process won, and a reader never sees a partly written file.
 */
async function publishOnce(path: string, content: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fh = await open(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, mode);
  try {
    await fh.writeFile(content, "utf8");
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, path);
  } catch (err) {
    if (!isErrno(err, "EEXIST")) throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, fsConstants.O_RDONLY);
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Directory fsync is best effort (not supported everywhere).
  }
}

/**
 * The Ed25519 key pair in `<dataDir>/keys/`, created on first use. Safe when several processes
 * start at once on one data dir: exactly one generated key wins and every caller returns it.
 * The private key file is the source of truth (mode 0600); the public key file is a copy for
 * components that only verify.
 */
export async function loadOrCreateKeys(dataDir: string): Promise<KeyMaterial> {
  return loadOrCreateKeyFiles(dataDir, PRIVATE_KEY_FILE, PUBLIC_KEY_FILE);
}

/**
 * The key pair `privateFile` (and, when named, its public copy `publicFile`) in `<dataDir>/keys/`,
 * created on first use as `loadOrCreateKeys` does.
 */
export async function loadOrCreateKeyFiles(dataDir: string, privateFile: string, publicFile: string | undefined): Promise<KeyMaterial> {
  const dir = join(dataDir, "keys");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const privatePath = join(dir, privateFile);

  let pem = await readIfExists(privatePath);
  if (pem === undefined) {
    const { privateKey } = generateKeyPairSync("ed25519");
    await publishOnce(privatePath, privateKey.export({ format: "pem", type: "pkcs8" }).toString(), 0o600);
    await syncDir(dir);
    pem = await readFile(privatePath, "utf8");
  }
  let keys: KeyMaterial;
  try {
    keys = await fullMaterial(toPrivateKeyObject(pem));
  } catch (err) {
    throw new Error(`cannot read the signing key ${privatePath}: ${(err as Error).message}`);
  }
  if (publicFile === undefined) return keys;
  const publicPath = join(dir, publicFile);
  const existingPublic = await readIfExists(publicPath);
  if (existingPublic === undefined) {
    await publishOnce(publicPath, keys.publicKeyPem, 0o644);
  } else if ((await keyId(existingPublic)) !== keys.kid) {
    throw new Error(`${publicPath} does not match ${privatePath}`);
  }
  return keys;
}

/**
 * Reads the public key of `<dataDir>/keys/` without creating anything: for a component that only
 * verifies. Falls back to deriving it from the private key file.
 */
export async function loadPublicKey(dataDir: string): Promise<PublicKeyMaterial> {
  const dir = join(dataDir, "keys");
  const pub = await readIfExists(join(dir, PUBLIC_KEY_FILE));
  if (pub !== undefined) return await publicMaterial(toPublicKeyObject(pub));
  const priv = await readIfExists(join(dir, PRIVATE_KEY_FILE));
  if (priv !== undefined) return await publicMaterial(toPublicKeyObject(priv));
  throw new Error(`no signing key in ${dir}`);
}

export interface LoadKeysOptions {
  /** Where `keys/` lives when the environment does not carry the keys. */
  readonly dataDir?: string | undefined;
  /** Defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Create a key pair in `dataDir` when none exists (default true). */
  readonly create?: boolean | undefined;
}

/**
 * Keys for a process: `FLAPLAB_JWT_PRIVATE_KEY` / `FLAPLAB_JWT_PUBLIC_KEY` (PEM text) when either
 * is set, otherwise the files in `<dataDir>/keys/` (created on first use unless `create: false`,
 * which reads the private key file if present, else only the public key file).
 * With only the public key in the environment the result can verify but not sign.
 */
export async function loadKeys(opts: LoadKeysOptions): Promise<KeyMaterial | PublicKeyMaterial> {
  const env = opts.env ?? process.env;
  const privateKeyPem = readText(env, JWT_PRIVATE_KEY)?.trim() || undefined;
  const publicKeyPem = readText(env, JWT_PUBLIC_KEY)?.trim() || undefined;
  if (privateKeyPem || publicKeyPem) return keysFromConfig({ privateKeyPem, publicKeyPem });
  if (!opts.dataDir) {
    throw new Error(`no signing keys: set ${PRIVATE_KEY_ENV} / ${PUBLIC_KEY_ENV} or give a data dir`);
  }
  if (opts.create !== false) return loadOrCreateKeys(opts.dataDir);
  const priv = await readIfExists(join(opts.dataDir, "keys", PRIVATE_KEY_FILE));
  return priv !== undefined ? fullMaterial(toPrivateKeyObject(priv)) : loadPublicKey(opts.dataDir);
}
