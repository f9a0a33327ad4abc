import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createServiceSigner,
  createSigner,
  createVerifier,
  keyId,
  loadServiceKeys,
  SERVICE_AUDIENCE,
  SERVICE_KEY_ENV,
  type Verifier,
} from "../src/index.js";

let player: { privateKey: KeyObject; publicKey: KeyObject };
let service: { privateKey: KeyObject; publicKey: KeyObject };
let verifier: Verifier;

beforeAll(() => {
  player = generateKeyPairSync("ed25519");
  service = generateKeyPairSync("ed25519");
  verifier = createVerifier({ publicKey: player.publicKey, serviceKey: service.publicKey });
});

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("component credentials", () => {
  it("name the calling component and the player, with their own audience and the service key's kid", async () => {
    const now = Date.UTC(2030, 0, 1);
    const token = await createServiceSigner({ privateKey: service.privateKey, now: () => now }).tokenFor("engine", "alice");
    expect(decodeProtectedHeader(token)).toEqual({ alg: "EdDSA", typ: "JWT", kid: await keyId(service.publicKey) });
    expect(decodeJwt(token)).toEqual({ svc: "engine", sub: "alice", iss: "flaplab", aud: SERVICE_AUDIENCE, iat: now / 1000, exp: now / 1000 + 300 });
  });

  it("verify to a principal that names the component, the player, or no player", async () => {
    const signer = createServiceSigner({ privateKey: service.privateKey });
    const forAlice = await verifier.verify(await signer.tokenFor("initiator", "alice"));
    expect(forAlice).toMatchObject({ username: "alice", service: "initiator" });
    const forNobody = await verifier.verify(await signer.tokenFor("engine", undefined));
    expect(forNobody).toMatchObject({ username: "", service: "engine" });
    // A player's token still verifies, without a component.
    const playerToken = (await createSigner({ privateKey: player.privateKey }).sign("bob")).token;
    const bob = await verifier.verify(playerToken);
    expect(bob.username).toBe("bob");
    expect(bob.service).toBeUndefined();
  });

  it("are reused until half their lifetime has passed, then renewed", async () => {
    let now = Date.UTC(2030, 0, 1);
    const signer = createServiceSigner({ privateKey: service.privateKey, ttlSeconds: 100, now: () => now });
    const first = await signer.tokenFor("engine", "alice");
    expect(signer.tokenFor("engine", "alice")).toBe(first); // a cache hit is synchronous
    expect(await signer.tokenFor("engine", "bob")).not.toBe(first);
    expect(await signer.tokenFor("music", "alice")).not.toBe(first);
    now += 49_000;
    expect(await signer.tokenFor("engine", "alice")).toBe(first);
    now += 2_000;
    const renewed = await signer.tokenFor("engine", "alice");
    expect(renewed).not.toBe(first);
    expect(decodeJwt(renewed).exp).toBe(now / 1000 + 100 - ((now / 1000) % 1));
  });

  it("are refused without the service key, or past their expiry", async () => {
    const signer = createServiceSigner({ privateKey: service.privateKey, ttlSeconds: 10, now: () => Date.now() - 60_000 });
    const stale = await signer.tokenFor("engine", "alice");
    expect((await failure(verifier.verify(stale))).rawMessage).toMatch(/expired/);
    const fresh = await createServiceSigner({ privateKey: service.privateKey }).tokenFor("engine", "alice");
    const playerOnly = createVerifier({ publicKey: player.publicKey });
    const err = await failure(playerOnly.verify(fresh));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toMatch(/unknown key/);
  });

  it("cannot be forged by a player: the player key with the service audience or the service kid is refused", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const withServiceAudience = await new SignJWT({ username: "mallory", svc: "engine" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(player.publicKey) })
      .setSubject("mallory").setIssuer("flaplab").setAudience(SERVICE_AUDIENCE).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(player.privateKey);
    expect((await failure(verifier.verify(withServiceAudience))).rawMessage).toMatch(/wrong audience/);
    const withServiceKid = await new SignJWT({ svc: "engine" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(service.publicKey) })
      .setSubject("mallory").setIssuer("flaplab").setAudience(SERVICE_AUDIENCE).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(player.privateKey);
    expect((await failure(verifier.verify(withServiceKid))).rawMessage).toMatch(/bad signature/);
  });

  it("are refused when they name no component, or carry the players' audience", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const noComponent = await new SignJWT({})
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(service.publicKey) })
      .setSubject("alice").setIssuer("flaplab").setAudience(SERVICE_AUDIENCE).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(service.privateKey);
    expect((await failure(verifier.verify(noComponent))).rawMessage).toMatch(/missing calling component/);
    const playersAudience = await new SignJWT({ svc: "engine", username: "alice" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(service.publicKey) })
      .setSubject("alice").setIssuer("flaplab").setAudience("flaplab").setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(service.privateKey);
    expect((await failure(verifier.verify(playersAudience))).rawMessage).toMatch(/wrong audience/);
  });
});

describe("loadServiceKeys", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("creates the shared key once in the data dir (0600) and returns the same key to every caller", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "flaplab-service-keys-"));
    dirs.push(dataDir);
    const [a, b] = await Promise.all([loadServiceKeys({ dataDir, env: {} }), loadServiceKeys({ dataDir, env: {} })]);
    expect(a.kid).toBe(b.kid);
    const file = join(dataDir, "keys", "service-ed25519.key.pem");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toBe(a.privateKeyPem);
    expect((await loadServiceKeys({ dataDir, env: {} })).kid).toBe(a.kid);
  });

  it("takes the key from the environment when it is set", async () => {
    const pem = service.privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const keys = await loadServiceKeys({ env: { [SERVICE_KEY_ENV]: pem } });
    expect(keys.kid).toBe(await keyId(service.publicKey));
    await expect(loadServiceKeys({ env: {} })).rejects.toThrow(SERVICE_KEY_ENV);
  });
});

describe("the verifier's cache", () => {
  it("answers `cached` only for a token verified before, whole and unexpired", async () => {
    let now = Date.now();
    const v = createVerifier({ publicKey: player.publicKey, serviceKey: service.publicKey, now: () => now });
    const token = (await createSigner({ privateKey: player.privateKey, ttlSeconds: 60 }).sign("alice")).token;
    expect(v.cached(token)).toBeUndefined();
    await v.verify(token);
    expect(v.cached(` ${token}`.slice(1))).toMatchObject({ username: "alice" }); // an equal, distinct string
    // Same signature end, different payload: not the cached principal, and it does not verify.
    const [h, , sig] = token.split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ username: "mallory", iss: "flaplab", aud: "flaplab", exp: 9e9 })).toString("base64url")}.${sig}`;
    expect(v.cached(forged)).toBeUndefined();
    await expect(v.verify(forged)).rejects.toMatchObject({ code: Code.Unauthenticated });
    expect(v.cached(token)).toMatchObject({ username: "alice" });
    now += 120_000;
    expect(v.cached(token)).toBeUndefined();
  });
});
