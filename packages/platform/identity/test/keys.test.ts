import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { generateKeyPair } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSigner,
  createVerifier,
  hasPrivateKey,
  keyId,
  keysFromConfig,
  loadKeys,
  loadOrCreateKeys,
  loadPublicKey,
  PRIVATE_KEY_FILE,
  PUBLIC_KEY_FILE,
} from "../src/index.js";

const run = promisify(execFile);
let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "flaplab-identity-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("loadOrCreateKeys", () => {
  it("creates an Ed25519 pair with a 0600 private key file, then reads the same pair", async () => {
    const first = await loadOrCreateKeys(dataDir);
    expect(first.privateKey.asymmetricKeyType).toBe("ed25519");
    expect(first.privateKeyPem).toContain("BEGIN PRIVATE KEY");
    expect(first.publicKeyPem).toContain("BEGIN PUBLIC KEY");
    const privStat = await stat(join(dataDir, "keys", PRIVATE_KEY_FILE));
    expect(privStat.mode & 0o777).toBe(0o600);
    expect(await readFile(join(dataDir, "keys", PUBLIC_KEY_FILE), "utf8")).toBe(first.publicKeyPem);

    const second = await loadOrCreateKeys(dataDir);
    expect(second.kid).toBe(first.kid);
    expect(second.privateKeyPem).toBe(first.privateKeyPem);
  });

  it("is race-safe within one process: concurrent calls agree and leave no temp files", async () => {
    const all = await Promise.all(Array.from({ length: 12 }, () => loadOrCreateKeys(dataDir)));
    const kids = new Set(all.map((k) => k.kid));
    expect(kids.size).toBe(1);
    expect((await readdir(join(dataDir, "keys"))).sort()).toEqual([PRIVATE_KEY_FILE, PUBLIC_KEY_FILE].sort());
  });

  it("is race-safe across processes: six children starting at once agree on one key", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/load-keys.ts", import.meta.url));
    const outs = await Promise.all(
      Array.from({ length: 6 }, () => run(process.execPath, ["--import", "tsx", fixture, dataDir], { cwd: process.cwd() })),
    );
    const kids = outs.map((o) => o.stdout.trim());
    expect(kids.every((k) => k.length === 43)).toBe(true);
    expect(new Set(kids).size).toBe(1);
    expect((await loadOrCreateKeys(dataDir)).kid).toBe(kids[0]);
    expect((await readdir(join(dataDir, "keys"))).sort()).toEqual([PRIVATE_KEY_FILE, PUBLIC_KEY_FILE].sort());
  }, 30_000);

  it("rejects a corrupt private key file instead of replacing it", async () => {
    await loadOrCreateKeys(dataDir);
    await writeFile(join(dataDir, "keys", PRIVATE_KEY_FILE), "not a key");
    await expect(loadOrCreateKeys(dataDir)).rejects.toThrow(/cannot read the signing key/);
  });
});

describe("keysFromConfig / loadKeys", () => {
  it("derives the public key from a private PEM and rejects a mismatched pair", async () => {
    const a = generateKeyPairSync("ed25519");
    const b = generateKeyPairSync("ed25519");
    const privateKeyPem = a.privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const keys = await keysFromConfig({ privateKeyPem });
    expect(keys.kid).toBe(await keyId(a.publicKey));
    const otherPub = b.publicKey.export({ format: "pem", type: "spki" }).toString();
    await expect(keysFromConfig({ privateKeyPem, publicKeyPem: otherPub })).rejects.toThrow(/does not belong/);
  });

  it("rejects a non-Ed25519 key", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    await expect(keysFromConfig({ privateKeyPem: pem })).rejects.toThrow(/Ed25519/);
  });

  it("prefers PEM from the environment (with escaped newlines) over files", async () => {
    const fileKeys = await loadOrCreateKeys(dataDir);
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const privPem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const pubPem = publicKey.export({ format: "pem", type: "spki" }).toString();

    const full = await loadKeys({ dataDir, env: { FLAPLAB_JWT_PRIVATE_KEY: privPem.replace(/\n/g, "\\n") } });
    expect(hasPrivateKey(full)).toBe(true);
    expect(full.kid).toBe(await keyId(publicKey));
    expect(full.kid).not.toBe(fileKeys.kid);

    const verifyOnly = await loadKeys({ dataDir, env: { FLAPLAB_JWT_PUBLIC_KEY: pubPem } });
    expect(hasPrivateKey(verifyOnly)).toBe(false);
    expect(verifyOnly.kid).toBe(full.kid);

    const fromFiles = await loadKeys({ dataDir, env: {} });
    expect(fromFiles.kid).toBe(fileKeys.kid);
  });

  it("with create: false reads existing files and creates nothing", async () => {
    await expect(loadKeys({ dataDir, env: {}, create: false })).rejects.toThrow(/no signing key/);
    expect(await readdir(dataDir)).toEqual([]);
    const created = await loadOrCreateKeys(dataDir);
    const existing = await loadKeys({ dataDir, env: {}, create: false });
    expect(existing.kid).toBe(created.kid);
    expect(hasPrivateKey(existing)).toBe(true);
    expect((await loadPublicKey(dataDir)).kid).toBe(created.kid);
  });

  it("fails without env keys and without a data dir", async () => {
    await expect(loadKeys({ env: {} })).rejects.toThrow(/FLAPLAB_JWT_PRIVATE_KEY/);
  });

  it("signs and verifies with file keys, a verify-only public key, and jose CryptoKeys", async () => {
    const keys = await loadOrCreateKeys(dataDir);
    const pubOnly = await keysFromConfig({ publicKeyPem: keys.publicKeyPem });
    const { token } = await createSigner({ privateKey: keys.privateKey }).sign("alice");
    expect((await createVerifier({ publicKey: pubOnly.publicKey }).verify(token)).username).toBe("alice");
    expect((await createVerifier({ publicKey: keys.publicKeyPem }).verify(token)).username).toBe("alice");

    const pair = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const signed = await createSigner({ privateKey: pair.privateKey }).sign("bob");
    expect((await createVerifier({ publicKey: pair.publicKey }).verify(signed.token)).username).toBe("bob");
  });
});
