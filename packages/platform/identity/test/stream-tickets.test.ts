import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createServiceSigner,
  createSigner,
  createStreamAuthorizer,
  createStreamTicketSigner,
  createStreamTicketVerifier,
  createVerifier,
  keyId,
  STREAM_AUDIENCE,
  type StreamTicketVerifier,
} from "../src/index.js";

let player: { privateKey: KeyObject; publicKey: KeyObject };
let ticketKey: { privateKey: KeyObject; publicKey: KeyObject };
/** The engine's own key: a component credential, never a ticket. */
let engineKey: { privateKey: KeyObject; publicKey: KeyObject };
let tickets: StreamTicketVerifier;

beforeAll(() => {
  player = generateKeyPairSync("ed25519");
  ticketKey = generateKeyPairSync("ed25519");
  engineKey = generateKeyPairSync("ed25519");
  tickets = createStreamTicketVerifier({ publicKey: ticketKey.publicKey });
});

async function reason(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  return (err as ConnectError).rawMessage;
}

describe("stream tickets", () => {
  it("name the game and the player, with their own audience, the ticket key's kid and a minute to live", async () => {
    const now = Date.UTC(2030, 0, 1);
    const { ticket, expiresAt } = await createStreamTicketSigner({ privateKey: ticketKey.privateKey, now: () => now }).sign("g-1", "alice");
    expect(decodeProtectedHeader(ticket)).toEqual({ alg: "EdDSA", typ: "JWT", kid: await keyId(ticketKey.publicKey) });
    expect(decodeJwt(ticket)).toEqual({ gid: "g-1", sub: "alice", iss: "flaplab", aud: STREAM_AUDIENCE, iat: now / 1000, exp: now / 1000 + 60 });
    expect(expiresAt.getTime()).toBe(now + 60_000);
    const verified = await createStreamTicketVerifier({ publicKey: ticketKey.publicKey, now: () => now + 30_000 }).verify(ticket);
    expect(verified).toEqual({ gameId: "g-1", username: "alice", engine: undefined, ticket, expiresAt });
  });

  it("name the engine whose game stream they open, when the signer says", async () => {
    const { ticket } = await createStreamTicketSigner({ privateKey: ticketKey.privateKey }).sign("g-1", "alice", "engine-2");
    expect(decodeJwt(ticket)).toMatchObject({ gid: "g-1", eng: "engine-2" });
    expect(await createStreamTicketVerifier({ publicKey: ticketKey.publicKey }).verify(ticket)).toMatchObject({ gameId: "g-1", engine: "engine-2" });
    const principal = await createStreamAuthorizer(createStreamTicketVerifier({ publicKey: ticketKey.publicKey }))(new URLSearchParams({ ticket }));
    expect(principal).toMatchObject({ username: "alice", gameId: "g-1", engine: "engine-2" });
  });

  it("expire: a ticket cannot open a stream after its lifetime (plus the clock tolerance)", async () => {
    const t0 = Date.UTC(2030, 0, 1);
    const { ticket } = await createStreamTicketSigner({ privateKey: ticketKey.privateKey, now: () => t0, ttlSeconds: 10 }).sign("g", "alice");
    const at = (ms: number) => createStreamTicketVerifier({ publicKey: ticketKey.publicKey, now: () => t0 + ms, clockToleranceSec: 0 });
    await expect(at(9_000).verify(ticket)).resolves.toMatchObject({ gameId: "g" });
    expect(await reason(at(11_000).verify(ticket))).toBe("invalid stream ticket: expired");
  });

  it("refuse a ticket signed by another key, a player token and a component credential", async () => {
    const other = generateKeyPairSync("ed25519");
    const forged = (await createStreamTicketSigner({ privateKey: other.privateKey }).sign("g", "alice")).ticket;
    expect(await reason(tickets.verify(forged))).toMatch(/signed by an unknown key/);
    // A good ticket whose game id was changed: the signature no longer matches.
    const good = (await createStreamTicketSigner({ privateKey: ticketKey.privateKey }).sign("g", "alice")).ticket;
    const [h, p, sig] = good.split(".") as [string, string, string];
    const claims = { ...(JSON.parse(Buffer.from(p, "base64url").toString()) as object), gid: "someone-elses-game" };
    const tampered = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${sig}`;
    expect(await reason(tickets.verify(tampered))).toBe("invalid stream ticket: bad signature");

    const playerToken = (await createSigner({ privateKey: player.privateKey }).sign("alice")).token;
    expect(await reason(tickets.verify(playerToken))).toMatch(/unknown key/);
    const credential = await createServiceSigner({ keys: new Map([["engine", engineKey.privateKey]]) }).tokenFor("engine", "music", "alice");
    expect(await reason(tickets.verify(credential))).toMatch(/signed by an unknown key/);
  });

  it("are refused where a player token or a component credential is expected", async () => {
    const { ticket } = await createStreamTicketSigner({ privateKey: ticketKey.privateKey }).sign("g", "alice");
    const verifier = createVerifier({ publicKey: player.publicKey, componentKeys: new Map([["engine", engineKey.publicKey]]) });
    await expect(verifier.verify(ticket)).rejects.toMatchObject({ code: Code.Unauthenticated, rawMessage: expect.stringMatching(/signed by an unknown key/) });
    // Even a verifier that took the ticket key for a component's would refuse it: a ticket is no credential.
    const confused = createVerifier({ publicKey: player.publicKey, componentKeys: new Map([["engine", ticketKey.publicKey]]) });
    await expect(confused.verify(ticket)).rejects.toMatchObject({ code: Code.Unauthenticated, rawMessage: "invalid token: wrong audience" });
  });

  it("need a game id and a player", async () => {
    const kid = await keyId(ticketKey.publicKey);
    const sign = (claims: Record<string, unknown>, sub?: string) => {
      const jwt = new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", kid }).setIssuer("flaplab").setAudience(STREAM_AUDIENCE).setIssuedAt().setExpirationTime("1m");
      if (sub !== undefined) jwt.setSubject(sub);
      return jwt.sign(ticketKey.privateKey);
    };
    expect(await reason(tickets.verify(await sign({}, "alice")))).toBe("invalid stream ticket: missing game id");
    expect(await reason(tickets.verify(await sign({ gid: "g" })))).toMatch(/missing username/);
    expect(await reason(tickets.verify(""))).toBe("invalid stream ticket: missing");
    expect(await reason(tickets.verify("x".repeat(5000)))).toBe("invalid stream ticket: malformed (too long)");
    expect(await reason(tickets.verify("not.a.jwt"))).toBe("invalid stream ticket: malformed");
  });

  it("refuse to sign without a game or a player", async () => {
    const signer = createStreamTicketSigner({ privateKey: ticketKey.privateKey });
    await expect(signer.sign("", "alice")).rejects.toThrow(/game id/);
    await expect(signer.sign("g", "")).rejects.toThrow(/username/);
  });
});

describe("createStreamAuthorizer", () => {
  it("makes the ticket's player the session's principal, with the ticket's game", async () => {
    const authorize = createStreamAuthorizer(tickets);
    const { ticket, expiresAt } = await createStreamTicketSigner({ privateKey: ticketKey.privateKey }).sign("g-1", "alice");
    const principal = await authorize(new URLSearchParams({ gameId: "g-9", ticket }));
    expect(principal).toEqual({ username: "alice", token: ticket, expiresAt, gameId: "g-1" });
  });

  it("refuses a URL without a ticket, even with a valid player token", async () => {
    const authorize = createStreamAuthorizer(tickets);
    const token = (await createSigner({ privateKey: player.privateKey }).sign("alice")).token;
    expect(await reason(authorize(new URLSearchParams({ gameId: "g-1", token })))).toBe("invalid stream ticket: missing");
    expect(await reason(authorize(new URLSearchParams({ gameId: "g-1", ticket: token })))).toMatch(/unknown key/);
  });
});
