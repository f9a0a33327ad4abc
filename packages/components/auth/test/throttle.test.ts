import { generateKeyPairSync } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createHandlerContext, type HandlerContext } from "@connectrpc/connect";
import { clientAddressKey } from "@flaplab/component";
import { AuthService, LoginRequestSchema, RegisterRequestSchema } from "@flaplab/contracts/auth/v1/auth_pb";
import { createSigner } from "@flaplab/identity";
import { describe, expect, it, vi } from "vitest";
import {
  AUTH_LIMIT_ENV,
  authLimitsFromEnv,
  createAuth,
  createMemoryUserStore,
  DEFAULT_AUTH_LIMITS,
  HashGate,
  resolveAuthLimits,
  type AuthLimits,
} from "../src/index.js";
import { FAST_SCRYPT } from "./helpers.js";

function ctx(name: "Register" | "Login", address?: string): HandlerContext {
  const contextValues = createContextValues();
  if (address !== undefined) contextValues.set(clientAddressKey, address);
  return createHandlerContext({
    service: AuthService,
    method: AuthService.methods.find((m) => m.name === name)!,
    protocolName: "test",
    requestMethod: "POST",
    url: `http://localhost/${AuthService.typeName}/${name}`,
    contextValues,
  });
}

async function service(limits: Partial<AuthLimits> = {}) {
  const { privateKey } = generateKeyPairSync("ed25519");
  const logger = { info: vi.fn(), warn: vi.fn() };
  const impl = createAuth({ store: createMemoryUserStore(), signer: createSigner({ privateKey }), scrypt: FAST_SCRYPT, limits, logger });
  const login = (username: string, password: string, address?: string) =>
    impl.login(create(LoginRequestSchema, { username, password }), ctx("Login", address));
  const register = (username: string, address?: string) =>
    impl.register(create(RegisterRequestSchema, { username, password: "the right password" }), ctx("Register", address));
  return { impl, login, register, logger };
}

/** The outcome of a call: "ok", or the error's code, message and retry-after header. */
async function outcome(p: unknown): Promise<{ code: Code | "ok"; message?: string; retryAfter?: string | null }> {
  try {
    await p;
    return { code: "ok" };
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, message: e.rawMessage, retryAfter: e.metadata.get("retry-after") };
  }
}

describe("login throttling", () => {
  it("answers most of 200 parallel wrong-password logins with ResourceExhausted and retry-after", async () => {
    const s = await service();
    await s.register("victim", "10.0.0.1");
    const results = await Promise.all(Array.from({ length: 200 }, () => outcome(s.login("victim", "wrong password", "10.0.0.66"))));
    const checked = results.filter((r) => r.code === Code.Unauthenticated);
    const throttled = results.filter((r) => r.code === Code.ResourceExhausted);
    expect(checked.length).toBeLessThanOrEqual(DEFAULT_AUTH_LIMITS.loginFailsPerUserAddress);
    expect(checked.length + throttled.length).toBe(200);
    for (const r of throttled) {
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(DEFAULT_AUTH_LIMITS.loginWindowSeconds);
      // A limit, or the address's share of the hashing places (2 of the 5 let through run at once).
      expect(r.message).toMatch(/^(too many (failed )?logins (for this user from your address|from your address|for this user)|the server is busy checking other passwords); try again in \d+ s$/);
    }
    expect(throttled.some((r) => /too many failed logins for this user from your address; try again in \d+ s/.test(r.message!))).toBe(true);
    // Guessing on, one at a time, the attacker gets 5 guesses checked in all; then the right password
    // from that address is throttled too, but the user can log in from elsewhere.
    let more = 0;
    while ((await outcome(s.login("victim", "wrong password", "10.0.0.66"))).code === Code.Unauthenticated) more++;
    expect(checked.length + more).toBe(DEFAULT_AUTH_LIMITS.loginFailsPerUserAddress);
    expect((await outcome(s.login("victim", "the right password", "10.0.0.66"))).code).toBe(Code.ResourceExhausted);
    expect((await outcome(s.login("victim", "the right password", "10.0.0.1"))).code).toBe("ok");
    expect(s.logger.warn).toHaveBeenCalledWith(expect.objectContaining({ event: "auth-throttled" }), expect.any(String));
  });

  it("counts failures only: successful logins give their attempt back", async () => {
    const s = await service({ loginFailsPerUserAddress: 3 });
    await s.register("alice", "10.0.0.1");
    for (let i = 0; i < 10; i++) expect((await outcome(s.login("alice", "the right password", "10.0.0.1"))).code).toBe("ok");
    for (let i = 0; i < 3; i++) expect((await outcome(s.login("alice", "wrong password", "10.0.0.1"))).code).toBe(Code.Unauthenticated);
    const fourth = await outcome(s.login("alice", "wrong password", "10.0.0.1"));
    expect(fourth.code).toBe(Code.ResourceExhausted);
    expect(fourth.message).toMatch(/^too many failed logins for this user from your address; try again in \d+ s$/);
  });

  it("limits failures per address across usernames (unknown users included)", async () => {
    const s = await service({ loginFailsPerAddress: 4 });
    for (let i = 0; i < 4; i++) expect((await outcome(s.login(`nobody${i}`, "some password", "10.0.0.9"))).code).toBe(Code.Unauthenticated);
    const next = await outcome(s.login("nobody9", "some password", "10.0.0.9"));
    expect(next).toMatchObject({ code: Code.ResourceExhausted, retryAfter: expect.stringMatching(/^\d+$/) });
    expect(next.message).toMatch(/^too many failed logins from your address/);
    expect((await outcome(s.login("nobody9", "some password", "10.0.0.10"))).code).toBe(Code.Unauthenticated);
  });

  it("limits failures per username across addresses, and per username alone without an address (direct calls)", async () => {
    const s = await service({ loginFailsPerUser: 4 });
    await s.register("bob");
    for (let i = 0; i < 4; i++) expect((await outcome(s.login("bob", "wrong password", `10.1.0.${i}`))).code).toBe(Code.Unauthenticated);
    const next = await outcome(s.login("BOB", "wrong password", "10.1.0.99"));
    expect(next.code).toBe(Code.ResourceExhausted);
    expect(next.message).toMatch(/^too many failed logins for this user; try again in \d+ s$/);

    const direct = await service({ loginFailsPerUserAddress: 2 });
    await direct.register("carol");
    expect((await outcome(direct.login("carol", "wrong password"))).code).toBe(Code.Unauthenticated);
    expect((await outcome(direct.login("carol", "wrong password"))).code).toBe(Code.Unauthenticated);
    expect((await outcome(direct.login("carol", "wrong password"))).code).toBe(Code.ResourceExhausted);
  });
});

describe("fair shares of the limits and the hashing", () => {
  it("gives the points taken by earlier limits back when a later one refuses: bursts of right passwords never lock the address", async () => {
    // Hashing wide open, so that only the limits decide.
    const s = await service({ maxConcurrentHashes: 20, maxQueuedHashes: 20, maxHashesPerAddress: 40, maxHashesPerUser: 40, loginsPerUser: 1000, loginsPerAddress: 1000 });
    await s.register("erin", "10.4.0.1");
    await s.register("frank", "10.4.0.1");
    for (let burst = 0; burst < 4; burst++) {
      const results = await Promise.all(Array.from({ length: 12 }, () => outcome(s.login("erin", "the right password", "10.4.0.9"))));
      expect(results.filter((r) => r.code === "ok").length, JSON.stringify(results)).toBe(DEFAULT_AUTH_LIMITS.loginFailsPerUserAddress);
      expect(results.filter((r) => r.code === Code.ResourceExhausted).every((r) => /for this user from your address/.test(r.message!))).toBe(true);
    }
    // 28 refused attempts from the address took nothing from its failed-login limit (20).
    expect((await outcome(s.login("frank", "the right password", "10.4.0.9"))).code).toBe("ok");
    for (let i = 0; i < DEFAULT_AUTH_LIMITS.loginFailsPerUserAddress; i++) {
      expect((await outcome(s.login("frank", "a wrong password", "10.4.0.9"))).code).toBe(Code.Unauthenticated);
    }
  });

  it("limits logins with the right password per account and per address too", async () => {
    const s = await service({ loginsPerUser: 3, loginsPerAddress: 5 });
    await s.register("gina", "10.5.0.1");
    await s.register("hank", "10.5.0.1");
    for (let i = 0; i < 3; i++) expect((await outcome(s.login("gina", "the right password", "10.5.0.2"))).code).toBe("ok");
    const fourth = await outcome(s.login("gina", "the right password", "10.5.0.3"));
    expect(fourth).toMatchObject({ code: Code.ResourceExhausted, retryAfter: expect.stringMatching(/^\d+$/) });
    expect(fourth.message).toMatch(/^too many logins for this user; try again in \d+ s$/);
    for (let i = 0; i < 2; i++) expect((await outcome(s.login("hank", "the right password", "10.5.0.2"))).code).toBe("ok");
    const sixth = await outcome(s.login("hank", "the right password", "10.5.0.2"));
    expect(sixth.message).toMatch(/^too many logins from your address; try again in \d+ s$/);
    expect((await outcome(s.login("hank", "the right password", "10.5.0.4"))).code).toBe("ok");
  });

  it("gives one address and one account a bounded share of the hashing places: another client still gets one", async () => {
    const gate = new HashGate(2, 4, (key) => (key.startsWith("address:") ? 3 : 2));
    const release: Array<() => void> = [];
    const held = () => new Promise<void>((resolve) => release.push(resolve));
    const flood = Array.from({ length: 12 }, (_, i) =>
      gate.run(held, [`user:u${i % 3}`, "address:10.6.0.1"]).then(
        () => "ok",
        (e: Error) => e.name,
      ),
    );
    // The flooding address holds 3 of the 6 places; a fourth of its hashes is refused, another address's is not.
    expect(gate.held("address:10.6.0.1")).toBe(3);
    const other = gate.run(async () => "served", ["user:victim", "address:10.6.0.2"]);
    expect(gate.held("address:10.6.0.2")).toBe(1);
    while (release.length > 0) release.shift()!();
    await new Promise((r) => setTimeout(r, 10));
    while (release.length > 0) release.shift()!();
    expect(await other).toBe("served");
    const outcomes = await Promise.all(flood);
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(3);
    expect(outcomes.filter((o) => o === "GateFullError")).toHaveLength(9);
    expect([gate.running, gate.waiting, gate.held("address:10.6.0.1")]).toEqual([0, 0, 0]);
  });
});

describe("registration throttling", () => {
  it("limits registrations per address, and not without an address", async () => {
    const s = await service({ registrationsPerAddress: 3 });
    for (let i = 0; i < 3; i++) expect((await outcome(s.register(`user${i}`, "10.2.0.1"))).code).toBe("ok");
    const next = await outcome(s.register("user3", "10.2.0.1"));
    expect(next.code).toBe(Code.ResourceExhausted);
    expect(next.message).toMatch(/^too many registrations from your address; try again in \d+ s$/);
    expect(Number(next.retryAfter)).toBeGreaterThan(500);
    expect((await outcome(s.register("user3", "10.2.0.2"))).code).toBe("ok");
    for (let i = 4; i < 10; i++) expect((await outcome(s.register(`user${i}`))).code).toBe("ok");
  });

  it("counts a Register call for a taken name like a registration: names cannot be probed faster than registered", async () => {
    const s = await service({ registrationsPerAddress: 3 });
    expect((await outcome(s.register("ivy", "10.7.0.1"))).code).toBe("ok");
    expect((await outcome(s.register("ivy", "10.7.0.1"))).code).toBe(Code.AlreadyExists);
    expect((await outcome(s.register("IVY", "10.7.0.1"))).code).toBe(Code.AlreadyExists);
    const probe = await outcome(s.register("ivy", "10.7.0.1"));
    expect(probe.code).toBe(Code.ResourceExhausted);
    expect(probe.message).toMatch(/^too many registrations from your address; try again in \d+ s$/);
  });

  it("lets the test suites' and the study's registrations from loopback through by default", async () => {
    const s = await service();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => outcome(s.register(`replay-${i}`, "127.0.0.1"))));
    // Twelve at once exceed the hashing queue (2 + 4); one after another they all pass.
    for (const [i, r] of results.entries()) if (r.code !== "ok") expect((await outcome(s.register(`replay-${i}`, "127.0.0.1"))).code).toBe("ok");
    for (let i = 12; i < 20; i++) expect((await outcome(s.register(`replay-${i}`, "127.0.0.1"))).code).toBe("ok");
  });
});

describe("bounded password hashing", () => {
  it("refuses hashes beyond the slots and the queue at once, with retry-after 1, and gives the attempt back", async () => {
    const s = await service({ maxConcurrentHashes: 1, maxQueuedHashes: 1, loginFailsPerUserAddress: 3 });
    await s.register("dave", "10.3.0.1");
    const results = await Promise.all(Array.from({ length: 3 }, (_, i) => outcome(s.login("dave", "the right password", `10.3.1.${i}`))));
    expect(results.map((r) => r.code)).toEqual(["ok", "ok", Code.ResourceExhausted]);
    expect(results[2]).toMatchObject({ retryAfter: "1", message: "the server is busy checking other passwords; try again in 1 s" });
    // Refused for business, not counted: three wrong passwords from that address are still checked.
    for (let i = 0; i < 3; i++) expect((await outcome(s.login("dave", "wrong password", "10.3.1.2"))).code).toBe(Code.Unauthenticated);
    expect(s.logger.warn).toHaveBeenCalledWith(expect.objectContaining({ event: "auth-busy" }), expect.any(String));
  });

  it("HashGate runs at most maxActive at once, in order, and refuses beyond the queue", async () => {
    const gate = new HashGate(2, 2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const work = (i: number) => async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 10));
      order.push(i);
      running--;
      return i;
    };
    const calls = Array.from({ length: 5 }, (_, i) => gate.run(work(i)).then((v) => v, (e: Error) => e.name));
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, "GateFullError"]);
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3]);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });
});

describe("limits configuration", () => {
  it("reads FLAPLAB_AUTH_* whole numbers and names a bad one", () => {
    expect(authLimitsFromEnv({})).toEqual({});
    expect(authLimitsFromEnv({ FLAPLAB_AUTH_LOGIN_FAILS_PER_USER_ADDRESS: "7", FLAPLAB_AUTH_MAX_QUEUED_HASHES: "0" })).toEqual({
      loginFailsPerUserAddress: 7,
      maxQueuedHashes: 0,
    });
    expect(() => authLimitsFromEnv({ FLAPLAB_AUTH_MAX_CONCURRENT_HASHES: "0" })).toThrow(
      'FLAPLAB_AUTH_MAX_CONCURRENT_HASHES must be a whole number ≥ 1, got "0"',
    );
    expect(() => authLimitsFromEnv({ FLAPLAB_AUTH_LOGIN_WINDOW_S: "1.5" })).toThrow(/FLAPLAB_AUTH_LOGIN_WINDOW_S/);
    expect(() => resolveAuthLimits({ registrationsPerAddress: -1 })).toThrow(/registrationsPerAddress/);
    expect(Object.keys(AUTH_LIMIT_ENV).sort()).toEqual(Object.keys(DEFAULT_AUTH_LIMITS).sort());
  });
});
