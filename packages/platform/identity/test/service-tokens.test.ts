import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createServiceSigner,
  createSigner,
  createVerifier,
  keyId,
  serviceAudience,
  type Verifier,
} from "../src/index.js";

let player: { privateKey: KeyObject; publicKey: KeyObject };
/** Each component's own key pair. */
let component: Record<"engine" | "initiator" | "music", { privateKey: KeyObject; publicKey: KeyObject }>;
let verifier: Verifier;
/** Signs as the engine, the initiator or the music component, each with its own key. */
let signingKeys: Map<"engine" | "initiator" | "music", KeyObject>;

beforeAll(() => {
  player = generateKeyPairSync("ed25519");
  component = { engine: generateKeyPairSync("ed25519"), initiator: generateKeyPairSync("ed25519"), music: generateKeyPairSync("ed25519") };
  signingKeys = new Map(Object.entries(component).map(([c, k]) => [c as keyof typeof component, k.privateKey]));
  verifier = createVerifier({ publicKey: player.publicKey, componentKeys: new Map(Object.entries(component).map(([c, k]) => [c as keyof typeof component, k.publicKey])) });
});

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe("component credentials", () => {
  it("name the calling component, its callee as audience and the player, signed with the caller's own key", async () => {
    const now = Date.UTC(2030, 0, 1);
    const token = await createServiceSigner({ keys: signingKeys, now: () => now }).tokenFor("engine", "music", "alice");
    expect(decodeProtectedHeader(token)).toEqual({ alg: "EdDSA", typ: "JWT", kid: await keyId(component.engine.publicKey) });
    expect(decodeJwt(token)).toEqual({ svc: "engine", sub: "alice", iss: "flaplab", aud: "flaplab-service:music", iat: now / 1000, exp: now / 1000 + 300 });
  });

  it("verify to a principal that names the component, the callee, the player, or no player", async () => {
    const signer = createServiceSigner({ keys: signingKeys });
    const forAlice = await verifier.verify(await signer.tokenFor("initiator", "engine", "alice"));
    expect(forAlice).toMatchObject({ username: "alice", service: "initiator", callee: "engine" });
    const forNobody = await verifier.verify(await signer.tokenFor("engine", "score", undefined));
    expect(forNobody).toMatchObject({ username: "", service: "engine", callee: "score" });
    // A player's token still verifies, without a component.
    const playerToken = (await createSigner({ privateKey: player.privateKey }).sign("bob")).token;
    const bob = await verifier.verify(playerToken);
    expect(bob.username).toBe("bob");
    expect(bob.service).toBeUndefined();
  });

  it("are reused until half their lifetime has passed, then renewed", async () => {
    let now = Date.UTC(2030, 0, 1);
    const signer = createServiceSigner({ keys: signingKeys, ttlSeconds: 100, now: () => now });
    const first = await signer.tokenFor("engine", "music", "alice");
    expect(signer.tokenFor("engine", "music", "alice")).toBe(first); // a cache hit is synchronous
    expect(await signer.tokenFor("engine", "music", "bob")).not.toBe(first);
    expect(await signer.tokenFor("engine", "score", "alice")).not.toBe(first);
    expect(await signer.tokenFor("music", "engine", "alice")).not.toBe(first);
    now += 49_000;
    expect(await signer.tokenFor("engine", "music", "alice")).toBe(first);
    now += 2_000;
    const renewed = await signer.tokenFor("engine", "music", "alice");
    expect(renewed).not.toBe(first);
    expect(decodeJwt(renewed).exp).toBe(now / 1000 + 100 - ((now / 1000) % 1));
  });

  it("are minted only for a component whose key the signer holds", () => {
    const musicOnly = createServiceSigner({ keys: new Map([["music", component.music.privateKey]]) });
    expect(() => musicOnly.tokenFor("engine", "score", "alice")).toThrow(/no key of component engine here/);
    // @ts-expect-error: the callee is a component
    expect(() => musicOnly.tokenFor("music", "scoreboard", "alice")).toThrow(/names its callee/);
  });

  it("are refused when signed with one component's key in another's name", async () => {
    const iat = Math.floor(Date.now() / 1000);
    // The music component's key, claiming to be the initiator (which may call the engine).
    const posing = await new SignJWT({ svc: "initiator" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(component.music.publicKey) })
      .setSubject("alice").setIssuer("flaplab").setAudience(serviceAudience("engine")).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(component.music.privateKey);
    expect((await failure(verifier.verify(posing))).rawMessage).toBe("invalid token: signed with the key of music, not of initiator");
    // The audience must name one component.
    const noCallee = await new SignJWT({ svc: "engine" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(component.engine.publicKey) })
      .setIssuer("flaplab").setAudience("flaplab-service:nobody").setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(component.engine.privateKey);
    expect((await failure(verifier.verify(noCallee))).rawMessage).toBe("invalid token: wrong audience");
    const twoCallees = await new SignJWT({ svc: "engine" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(component.engine.publicKey) })
      .setIssuer("flaplab").setAudience([serviceAudience("music"), serviceAudience("score")]).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(component.engine.privateKey);
    expect((await failure(verifier.verify(twoCallees))).rawMessage).toBe("invalid token: wrong audience");
  });

  it("are refused without the component's public key, or past their expiry", async () => {
    const signer = createServiceSigner({ keys: signingKeys, ttlSeconds: 10, now: () => Date.now() - 60_000 });
    const stale = await signer.tokenFor("engine", "music", "alice");
    expect((await failure(verifier.verify(stale))).rawMessage).toMatch(/expired/);
    const fresh = await createServiceSigner({ keys: signingKeys }).tokenFor("engine", "music", "alice");
    const playerOnly = createVerifier({ publicKey: player.publicKey });
    const err = await failure(playerOnly.verify(fresh));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toMatch(/unknown key/);
  });

  it("cannot be forged by a player: the player key with a component audience or a component's kid is refused", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const withServiceAudience = await new SignJWT({ username: "mallory", svc: "engine" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(player.publicKey) })
      .setSubject("mallory").setIssuer("flaplab").setAudience(serviceAudience("score")).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(player.privateKey);
    expect((await failure(verifier.verify(withServiceAudience))).rawMessage).toMatch(/wrong audience/);
    const withServiceKid = await new SignJWT({ svc: "engine" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(component.engine.publicKey) })
      .setSubject("mallory").setIssuer("flaplab").setAudience(serviceAudience("score")).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(player.privateKey);
    expect((await failure(verifier.verify(withServiceKid))).rawMessage).toMatch(/bad signature/);
  });

  it("are refused when they name no component, or carry the players' audience", async () => {
    const iat = Math.floor(Date.now() / 1000);
    const noComponent = await new SignJWT({})
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(component.engine.publicKey) })
      .setSubject("alice").setIssuer("flaplab").setAudience(serviceAudience("music")).setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(component.engine.privateKey);
    expect((await failure(verifier.verify(noComponent))).rawMessage).toMatch(/missing calling component/);
    const playersAudience = await new SignJWT({ svc: "engine", username: "alice" })
      .setProtectedHeader({ alg: "EdDSA", kid: await keyId(component.engine.publicKey) })
      .setSubject("alice").setIssuer("flaplab").setAudience("flaplab").setIssuedAt(iat).setExpirationTime(iat + 60)
      .sign(component.engine.privateKey);
    expect((await failure(verifier.verify(playersAudience))).rawMessage).toMatch(/wrong audience/);
  });
});

describe("the verifier's cache", () => {
  it("answers `cached` only for a token verified before, whole and unexpired", async () => {
    let now = Date.now();
    const v = createVerifier({ publicKey: player.publicKey, componentKeys: new Map([["engine", component.engine.publicKey]]), now: () => now });
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
