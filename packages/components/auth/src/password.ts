import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/** scrypt cost parameters. Stored with every hash, so changing the defaults keeps old hashes valid. */
export interface ScryptParams {
  /** CPU/memory cost, a power of two. Memory use is 128 · N · r bytes. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
  /** Derived key length in bytes. */
  readonly keyLength: number;
}

/**
 * OWASP's recommendation for scrypt: N=2^17, r=8, p=1. 128 MiB and ≈ 355 ms per hash on this
 * project's 2-core VM (N=2^15 took ≈ 90 ms). Hashes made with other parameters keep verifying.
 */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { N: 2 ** 17, r: 8, p: 1, keyLength: 32 };

const SALT_BYTES = 16;
const PREFIX = "scrypt";
// Bounds for parameters read back from storage, so a corrupt row cannot ask for gigabytes.
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;
/** Most memory a stored hash may make scrypt take (128·N·r bytes): 1 GiB. */
const MAX_MEMORY = 2 ** 30;

/** Throws unless the parameters are usable (N a power of two, all within safe bounds). */
export function checkScryptParams(params: ScryptParams): void {
  const { N, r, p, keyLength } = params;
  const ok =
    Number.isInteger(N) && N >= 2 && N <= MAX_N && (N & (N - 1)) === 0 &&
    Number.isInteger(r) && r >= 1 && r <= MAX_R &&
    Number.isInteger(p) && p >= 1 && p <= MAX_P &&
    Number.isInteger(keyLength) && keyLength >= 16 && keyLength <= 64 &&
    128 * N * r <= MAX_MEMORY;
  if (!ok) throw new Error(`bad scrypt parameters N=${N} r=${r} p=${p} keyLength=${keyLength}`);
}

/**
 * The memory scrypt needs for `params`, with room to spare: OpenSSL allocates 128·r·(N + 2) bytes for
 * V plus 128·r·p for B (128 MiB + 3 KiB at N=2^17, r=8, p=1); Node refuses above `maxmem`.
 */
export function scryptMaxmem(params: Pick<ScryptParams, "N" | "r" | "p">): number {
  return 128 * params.r * (params.N + params.p + 2) + 1024 * 1024;
}

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const { N, r, p, keyLength } = params;
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, keyLength, { N, r, p, maxmem: scryptMaxmem(params) }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** A self-describing one-way hash: `scrypt$N$r$p$<salt base64url>$<key base64url>`. */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  checkScryptParams(params);
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params);
  return [PREFIX, params.N, params.r, params.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** True when `password` matches `stored` (constant-time comparison). Throws on a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== PREFIX) throw new Error("unrecognised password hash format");
  const [, n, r, p, saltText, keyText] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(keyText, "base64url");
  const params: ScryptParams = { N: Number(n), r: Number(r), p: Number(p), keyLength: expected.length };
  checkScryptParams(params);
  const salt = Buffer.from(saltText, "base64url");
  if (salt.length < 8) throw new Error("password hash salt too short");
  const actual = await derive(password, salt, params);
  return timingSafeEqual(actual, expected);
}
