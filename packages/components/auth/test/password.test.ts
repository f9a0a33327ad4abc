import { describe, expect, it } from "vitest";
import { checkScryptParams, DEFAULT_SCRYPT_PARAMS, hashPassword, scryptMaxmem, verifyPassword } from "../src/index.js";
import { FAST_SCRYPT } from "./helpers.js";

// scrypt at the production cost (N=2^17: 128 MiB, ≈ 0.3–0.5 s a hash here) is slow on purpose; on two
// cores shared with other suites a hash can take several seconds.
const SLOW_KDF_MS = 30_000;

describe("password hashing", () => {
  it("stores a self-describing scrypt string with a random salt and no trace of the password", async () => {
    const password = "correct horse battery";
    const a = await hashPassword(password, DEFAULT_SCRYPT_PARAMS);
    const parts = a.split("$");
    expect(parts.slice(0, 4)).toEqual(["scrypt", "131072", "8", "1"]);
    expect(Buffer.from(parts[4]!, "base64url")).toHaveLength(16);
    expect(Buffer.from(parts[5]!, "base64url")).toHaveLength(32);
    expect(a).not.toContain(password);
    const b = await hashPassword(password, DEFAULT_SCRYPT_PARAMS);
    expect(b).not.toBe(a);
    expect(await verifyPassword(password, a)).toBe(true);
    expect(await verifyPassword(password, b)).toBe(true);
  }, SLOW_KDF_MS);

  it("hashes new passwords at N=2^17, r=8, p=1 and still verifies hashes made at the old N=2^15", async () => {
    expect(DEFAULT_SCRYPT_PARAMS).toEqual({ N: 2 ** 17, r: 8, p: 1, keyLength: 32 });
    expect(scryptMaxmem(DEFAULT_SCRYPT_PARAMS)).toBeGreaterThan(128 * 2 ** 17 * 8);
    // A hash stored before the change, with the parameters it was made with.
    const old = await hashPassword("an old password", { N: 2 ** 15, r: 8, p: 1, keyLength: 32 });
    expect(old.split("$").slice(0, 4)).toEqual(["scrypt", "32768", "8", "1"]);
    expect(await verifyPassword("an old password", old)).toBe(true);
    expect(await verifyPassword("an old passwort", old)).toBe(false);
    const t0 = performance.now();
    const fresh = await hashPassword("a new password", DEFAULT_SCRYPT_PARAMS);
    const hashMs = performance.now() - t0;
    const t1 = performance.now();
    expect(await verifyPassword("a new password", fresh)).toBe(true);
    const verifyMs = performance.now() - t1;
    console.log(`scrypt N=2^17 r=8 p=1: hash ${hashMs.toFixed(0)} ms, verify ${verifyMs.toFixed(0)} ms`);
  }, SLOW_KDF_MS);

  it("rejects wrong passwords and verifies with the parameters stored in the hash", async () => {
    const h = await hashPassword("hunter2hunter2", { ...FAST_SCRYPT, keyLength: 64 });
    expect(h.split("$").slice(1, 4)).toEqual(["1024", "8", "1"]);
    expect(await verifyPassword("hunter2hunter2", h)).toBe(true);
    expect(await verifyPassword("hunter2hunter3", h)).toBe(false);
    expect(await verifyPassword("", h)).toBe(false);
  });

  it("treats NFC and NFD spellings of a password as the same", async () => {
    const h = await hashPassword("caf\u00e9-au-lait", FAST_SCRYPT);
    expect(await verifyPassword("cafe\u0301-au-lait", h)).toBe(true);
  });

  it("refuses malformed hashes and unsafe parameters", async () => {
    await expect(verifyPassword("x", "plaintext")).rejects.toThrow(/format/);
    await expect(verifyPassword("x", "scrypt$1073741824$8$1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5")).rejects.toThrow(
      /bad scrypt parameters/,
    );
    expect(() => checkScryptParams({ N: 1000, r: 8, p: 1, keyLength: 32 })).toThrow(/bad scrypt/);
    expect(() => checkScryptParams(FAST_SCRYPT)).not.toThrow();
    // Within each bound, but 4 GiB of memory: a corrupt row cannot ask for that.
    expect(() => checkScryptParams({ N: 2 ** 20, r: 32, p: 1, keyLength: 32 })).toThrow(/bad scrypt/);
  });
});
