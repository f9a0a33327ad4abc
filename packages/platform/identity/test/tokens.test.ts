import { createHmac, generateKeyPairSync, type KeyObject } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createSigner, createVerifier, keyId, parseBearer, type Verifier } from "../src/index.js";

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");

async function expectUnauthenticated(p: Promise<unknown>, reason: RegExp): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const ce = err as ConnectError;
  expect(ce.code).toBe(Code.Unauthenticated);
  expect(ce.rawMessage).toMatch(reason);
  return ce;
}

let privateKey: KeyObject;
let publicKey: KeyObject;
let verifier: Verifier;

beforeAll(() => {
  ({ privateKey, publicKey } = generateKeyPairSync("ed25519"));
  verifier = createVerifier({ publicKey });
});

describe("signer", () => {
  it("puts sub, username, iat, exp, iss, aud and a kid header on the token", async () => {
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const { token, expiresAt } = await createSigner({ privateKey, ttlSeconds: 600, now: () => now }).sign("alice");
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: "EdDSA", typ: "JWT", kid: await keyId(publicKey) });
    expect(decodeJwt(token)).toEqual({
      sub: "alice",
      username: "alice",
      iss: "flaplab",
      aud: "flaplab",
      iat: now / 1000,
      exp: now / 1000 + 600,
    });
    expect(expiresAt.getTime()).toBe(now + 600_000);
  });

  it("refuses an empty username and a bad ttl", async () => {
    await expect(createSigner({ privateKey }).sign("")).rejects.toThrow(/empty username/);
    expect(() => createSigner({ privateKey, ttlSeconds: 0 })).toThrow(/ttlSeconds/);
    expect(() => createSigner({ privateKey: publicKey })).toThrow(/private key/);
  });
});

describe("verifier", () => {
  it("round-trips a token into a principal", async () => {
    const { token, expiresAt } = await createSigner({ privateKey }).sign("alice");
    const p = await verifier.verify(token);
    expect(p).toEqual({ username: "alice", token, expiresAt });
  });

  it("rejects an expired token", async () => {
    const past = Date.now() - 2 * 3600_000;
    const { token } = await createSigner({ privateKey, now: () => past }).sign("alice");
    await expectUnauthenticated(verifier.verify(token), /expired/);
  });

  it("honours the clock tolerance", async () => {
    const t0 = Date.UTC(2030, 0, 1);
    const { token } = await createSigner({ privateKey, ttlSeconds: 60, now: () => t0 }).sign("alice");
    const at = (ms: number) => createVerifier({ publicKey, clockToleranceSec: 5, cacheSize: 0, now: () => ms });
    await expect(at(t0 + 64_999).verify(token)).resolves.toMatchObject({ username: "alice" });
    await expectUnauthenticated(at(t0 + 65_000).verify(token), /expired/);
  });

  it("rejects a tampered payload", async () => {
    const { token } = await createSigner({ privateKey }).sign("alice");
    const [h, p, s] = token.split(".") as [string, string, string];
    const claims = { ...decodeJwt(token), username: "mallory", sub: "mallory" };
    expect(p).not.toBe(b64(claims));
    await expectUnauthenticated(verifier.verify(`${h}.${b64(claims)}.${s}`), /bad signature/);
  });

  it("rejects a tampered signature", async () => {
    const { token } = await createSigner({ privateKey }).sign("alice");
    const [h, p, s] = token.split(".") as [string, string, string];
    const sig = Buffer.from(s, "base64url");
    sig[10] = (sig[10] ?? 0) ^ 0xff;
    await expectUnauthenticated(verifier.verify(`${h}.${p}.${sig.toString("base64url")}`), /bad signature/);
  });

  it("rejects an unsigned alg none token", async () => {
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const payload = { sub: "alice", username: "alice", iss: "flaplab", aud: "flaplab", exp };
    const token = `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`;
    await expectUnauthenticated(verifier.verify(token), /algorithm none not allowed/);
  });

  it("rejects HS256 tokens, including one keyed with the public key", async () => {
    const claims = { username: "alice", sub: "alice" };
    const withSecret = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("flaplab")
      .setAudience("flaplab")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("your-super-secret-key"));
    await expectUnauthenticated(verifier.verify(withSecret), /algorithm HS256 not allowed/);

    // Classic confusion attack: HMAC with the public key PEM as the secret, built by hand.
    const pem = publicKey.export({ format: "pem", type: "spki" }).toString();
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const input = `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ ...claims, iss: "flaplab", aud: "flaplab", exp })}`;
    const mac = createHmac("sha256", pem).update(input).digest("base64url");
    await expectUnauthenticated(verifier.verify(`${input}.${mac}`), /algorithm HS256 not allowed/);
  });

  it("rejects a wrong audience and a wrong issuer", async () => {
    const other = await createSigner({ privateKey, audience: "elsewhere" }).sign("alice");
    await expectUnauthenticated(verifier.verify(other.token), /wrong audience/);
    const otherIss = await createSigner({ privateKey, issuer: "someone" }).sign("alice");
    await expectUnauthenticated(verifier.verify(otherIss.token), /wrong issuer/);
  });

  it("rejects a token from another key pair, with or without a kid", async () => {
    const other = generateKeyPairSync("ed25519");
    const withKid = await createSigner({ privateKey: other.privateKey }).sign("alice");
    await expectUnauthenticated(verifier.verify(withKid.token), /unknown key/);
    const forgedKid = await createSigner({ privateKey: other.privateKey, kid: await keyId(publicKey) }).sign("alice");
    await expectUnauthenticated(verifier.verify(forgedKid.token), /bad signature/);
    const noKid = await new SignJWT({ username: "alice" })
      .setProtectedHeader({ alg: "EdDSA" })
      .setIssuer("flaplab")
      .setAudience("flaplab")
      .setExpirationTime("1h")
      .sign(other.privateKey);
    await expectUnauthenticated(verifier.verify(noKid), /bad signature/);
  });

  it("rejects garbage", async () => {
    for (const junk of ["garbage", "a.b.c", "...", "eyJ.eyJ.x", "x".repeat(5000)]) {
      await expectUnauthenticated(verifier.verify(junk), /malformed/);
    }
    await expectUnauthenticated(verifier.verify(""), /empty/);
  });

  it("rejects a validly signed token without a username, or with a different subject", async () => {
    const kid = await keyId(publicKey);
    const build = (claims: Record<string, unknown>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "EdDSA", kid })
        .setIssuer("flaplab")
        .setAudience("flaplab")
        .setExpirationTime("1h")
        .sign(privateKey);
    await expectUnauthenticated(verifier.verify(await build({ sub: "alice" })), /missing username/);
    await expectUnauthenticated(verifier.verify(await build({ username: 42 })), /missing username/);
    await expectUnauthenticated(verifier.verify(await build({ username: "alice", sub: "bob" })), /differ/);
    const noExp = await new SignJWT({ username: "alice" })
      .setProtectedHeader({ alg: "EdDSA" })
      .setIssuer("flaplab")
      .setAudience("flaplab")
      .sign(privateKey);
    await expectUnauthenticated(verifier.verify(noExp), /exp/);
  });
});

describe("verifier cache", () => {
  it("returns the same principal for a cached token and rejects it after expiry", async () => {
    let clock = Date.UTC(2030, 0, 1);
    const now = () => clock;
    const { token } = await createSigner({ privateKey, ttlSeconds: 30, now }).sign("alice");
    const v = createVerifier({ publicKey, clockToleranceSec: 5, now });
    const first = await v.verify(token);
    const second = await v.verify(token);
    expect(second).toBe(first);

    clock += 34_999;
    expect(await v.verify(token)).toBe(first);
    clock += 1;
    await expectUnauthenticated(v.verify(token), /expired/);
    await expectUnauthenticated(v.verify(token), /expired/);
  });

  it("never lets a failed token pass, even after a valid one was cached", async () => {
    const { token } = await createSigner({ privateKey }).sign("alice");
    const v = createVerifier({ publicKey });
    await v.verify(token);
    const [h, p, s] = token.split(".") as [string, string, string];
    const sig = Buffer.from(s, "base64url");
    sig[0] = (sig[0] ?? 0) ^ 0x01;
    const bad = `${h}.${p}.${sig.toString("base64url")}`;
    await expectUnauthenticated(v.verify(bad), /bad signature/);
    await expectUnauthenticated(v.verify(bad), /bad signature/);
  });

  it("stays bounded and still verifies evicted tokens", async () => {
    const signer = createSigner({ privateKey });
    const v = createVerifier({ publicKey, cacheSize: 2 });
    const tokens = await Promise.all(["a11", "b22", "c33"].map((u) => signer.sign(u)));
    const firsts = [];
    for (const t of tokens) firsts.push(await v.verify(t.token));
    // The first token was evicted: a fresh object, same content.
    const again = await v.verify(tokens[0]!.token);
    expect(again).not.toBe(firsts[0]);
    expect(again).toEqual(firsts[0]);
    expect(await v.verify(tokens[2]!.token)).toBe(firsts[2]);
  });

  it("makes a cache hit cheap", async () => {
    const { token } = await createSigner({ privateKey }).sign("alice");
    const v = createVerifier({ publicKey });
    await v.verify(token);
    const n = 20_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await v.verify(token);
    const perCallUs = ((performance.now() - t0) * 1000) / n;
    expect(perCallUs).toBeLessThan(20);
  });
});

describe("parseBearer", () => {
  it("extracts the token", () => {
    expect(parseBearer("Bearer abc.def.ghi")).toBe("abc.def.ghi");
    expect(parseBearer("bearer   abc")).toBe("abc");
  });

  it("throws Unauthenticated for missing or malformed headers", () => {
    for (const h of [null, undefined, "", "   ", "Bearer", "Bearer ", "Basic dXNlcjpwdw==", "Bearer a b", "abc"]) {
      let err: unknown;
      try {
        parseBearer(h);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unauthenticated);
      expect((err as ConnectError).rawMessage).toMatch(/missing bearer token/);
    }
  });
});
