// Attack: logins with the right password. Three accounts log in with their own passwords, 12 at a
// time, from one address; or one account logs in 12 times at once, again and again. Before,
// successful logins counted against nothing, so the password-hash gate (2 running, 4 waiting) stayed
// full and another user's logins were all answered "the server is busy"; and when a later limit
// refused a login, the points taken by the limits before it were kept, so an address locked
// itself out with no wrong password. Now one address and one account hold a bounded share of the
// hashing places (3 and 2 of 6), logins with the right password are limited per account and
// address too (FLAPLAB_AUTH_LOGINS_PER_USER, 5 a minute here), and a refused attempt counts nowhere.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMonolith, type Monolith } from "./credentials-harness.js";

const ENV = { FLAPLAB_AUTH_LOGINS_PER_USER: "5" };
const PASSWORD = "a long enough password";

let m: Monolith;

beforeAll(async () => {
  m = await startMonolith({ env: ENV });
  for (const name of ["acct1", "acct2", "acct3", "victim", "burst", "bystander"]) await m.register(name);
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

function authFrom(localAddress: string) {
  return createClient(AuthService, createConnectTransport({ baseUrl: m.baseUrl, httpVersion: "1.1", nodeOptions: { localAddress } }));
}

async function login(client: ReturnType<typeof authFrom>, username: string): Promise<{ code: string; message: string; ms: number }> {
  const t0 = performance.now();
  try {
    await client.login({ username, password: PASSWORD });
    return { code: "ok", message: "", ms: performance.now() - t0 };
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: Code[e.code]!, message: e.rawMessage, ms: performance.now() - t0 };
  }
}

const tally = (rs: Array<{ code: string; message: string }>) => {
  const out: Record<string, number> = {};
  for (const r of rs) {
    const key = r.code === "ok" ? "ok" : r.message.replace(/; try again in \d+ s$/, "");
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
};

describe("logins with the right password", () => {
  it("from three accounts, 12 at a time from one address, leave hashing places for another user, and are rate-limited", async () => {
    const attacker = authFrom("127.0.0.1");
    const results: Array<{ code: string; message: string; ms: number }> = [];
    let stop = false;
    let n = 0;
    const worker = async () => {
      // Bounded: at most 30 logins per worker, and the flood stops when the victim is done.
      for (let i = 0; i < 30 && !stop; i++) results.push(await login(attacker, `acct${(n++ % 3) + 1}`));
    };
    const flood = Promise.all(Array.from({ length: 12 }, worker));
    await new Promise((r) => setTimeout(r, 200));
    const victim = authFrom("127.0.0.7");
    const victims: Array<{ code: string; message: string; ms: number }> = [];
    for (let i = 0; i < 3; i++) victims.push(await login(victim, "victim"));
    stop = true;
    await flood;
    console.log(
      `attacker's ${results.length} logins: ${JSON.stringify(tally(results))}; the victim's 3: ${JSON.stringify(tally(victims))}, ` +
        `${victims.map((v) => v.ms.toFixed(0)).join(", ")} ms`,
    );
    expect(victims.filter((v) => v.code === "ok").length).toBe(3);
    // Each of the three accounts got at most 5 logins with the right password in the window.
    expect(results.filter((r) => r.code === "ok").length).toBeLessThanOrEqual(15);
    // One account logging in on, one login at a time: refused by the sixth in the window at the latest.
    let more: Awaited<ReturnType<typeof login>>;
    let extra = 0;
    do more = await login(attacker, "acct1");
    while (more.code === "ok" && ++extra < 6);
    expect(more.message).toMatch(/^too many logins for this user; try again in \d+ s$/);
  }, 60_000);

  it("12 at once for one account, three times, do not lock the address out: refused attempts count nowhere", async () => {
    const client = authFrom("127.0.0.8");
    const bursts: Array<Record<string, number>> = [];
    for (let b = 0; b < 3; b++) bursts.push(tally(await Promise.all(Array.from({ length: 12 }, () => login(client, "burst")))));
    // The victim's own login from that address (another account) afterwards.
    const after = await login(client, "bystander");
    console.log(`three bursts of 12 right-password logins: ${JSON.stringify(bursts)}; another account's login from that address then: ${JSON.stringify(tally([after]))}`);
    expect(after.code).toBe("ok");
  }, 60_000);
});
