import { describe, expect, it } from "vitest";
import { checkScryptParams, DEFAULT_SCRYPT_PARAMS, hashPassword, verifyPassword } from "../src/index.js";
import { FAST_SCRYPT } from "./helpers.js";

describe("password hashing", () => {
  it("stores a self-describing scrypt string with a random salt and no trace of the password", async () => {
    const password = "correct horse battery";
    const a = await hashPassword(password, DEFAULT_SCRYPT_PARAMS);
    const parts = a.split("$");
    expect(parts.slice(0, 4)).toEqual(["scrypt", "32768", "8", "1"]);
    expect(Buffer.from(parts[4]!, "base64url")).toHaveLength(16);
    expect(Buffer.from(parts[5]!, "base64url")).toHaveLength(32);
    expect(a).not.toContain(password);
    const b = await hashPassword(password, DEFAULT_SCRYPT_PARAMS);
    expect(b).not.toBe(a);
    expect(await verifyPassword(password, a)).toBe(true);
    expect(await verifyPassword(password, b)).toBe(true);
  });

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
  });
});
