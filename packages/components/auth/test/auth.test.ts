import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { createSigner, createVerifier } from "@flaplab/identity";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  authComponent,
  createAuth,
  createMemoryUserStore,
  INVALID_CREDENTIALS,
  openUserStore,
  USER_DB_FILE,
  type UserStore,
} from "../src/index.js";
import { expectCode, FAST_SCRYPT, login, register } from "./helpers.js";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const signer = createSigner({ privateKey, ttlSeconds: 900 });
const verifier = createVerifier({ publicKey });

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "flaplab-auth-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

it("defines the auth component with public Register and Login", () => {
  expect(authComponent.name).toBe("auth");
  expect(authComponent.publicMethods).toEqual(["Register", "Login"]);
});

const stores: Record<string, () => UserStore> = {
  memory: () => createMemoryUserStore(),
  sqlite: () => openUserStore(dataDir),
};

for (const [kind, makeStore] of Object.entries(stores)) {
  describe(`auth with the ${kind} store`, () => {
    let store: UserStore;
    beforeEach(() => {
      store = makeStore();
    });
    afterEach(() => store.close());
    const auth = () => createAuth({ store, signer, scrypt: FAST_SCRYPT });

    it("registers, then logs in, with tokens the verifier accepts", async () => {
      const impl = auth();
      const before = Date.now();
      const reg = await register(impl, "alice", "wonderland");
      expect(reg.username).toBe("alice");
      const p = await verifier.verify(reg.token);
      expect(p.username).toBe("alice");
      expect(p.expiresAt.getTime()).toBe(reg.expiresAt.getTime());
      expect(reg.expiresAt.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 900_000);

      const li = await login(impl, "alice", "wonderland");
      expect(li.username).toBe("alice");
      expect((await verifier.verify(li.token)).username).toBe("alice");
    });

    it("rejects a wrong password and an unknown user with the same message", async () => {
      const impl = auth();
      await register(impl, "alice", "wonderland");
      const wrong = await expectCode(login(impl, "alice", "wonderlant"), Code.Unauthenticated);
      const unknown = await expectCode(login(impl, "nobody", "wonderland"), Code.Unauthenticated);
      expect(wrong.rawMessage).toBe(INVALID_CREDENTIALS);
      expect(unknown.rawMessage).toBe(INVALID_CREDENTIALS);
    });

    it("refuses a duplicate name, ignoring case, and keeps the first password", async () => {
      const impl = auth();
      await register(impl, "alice", "wonderland");
      await expectCode(register(impl, "alice", "different-pw"), Code.AlreadyExists, /alice is already taken/);
      await expectCode(register(impl, "ALICE", "different-pw"), Code.AlreadyExists);
      await expectCode(login(impl, "alice", "different-pw"), Code.Unauthenticated);
      // Logging in with another case yields the registered spelling.
      expect((await login(impl, "Alice", "wonderland")).username).toBe("alice");
    });

    it("lets exactly one of two racing registrations win", async () => {
      const impl = auth();
      const results = await Promise.allSettled([
        register(impl, "racer", "password-one"),
        register(impl, "racer", "password-two"),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const winner = results[0]!.status === "fulfilled" ? "password-one" : "password-two";
      const loser = winner === "password-one" ? "password-two" : "password-one";
      expect((await login(impl, "racer", winner)).username).toBe("racer");
      await expectCode(login(impl, "racer", loser), Code.Unauthenticated);
    });

    it("validates usernames and passwords", async () => {
      const impl = auth();
      for (const name of ["ab", "a".repeat(33), "has space", "ünï", "semi;colon", ""]) {
        await expectCode(register(impl, name, "long-enough"), Code.InvalidArgument, /username must be 3 to 32/);
      }
      for (const pw of ["short", "", "x".repeat(257)]) {
        await expectCode(register(impl, "valid_name", pw), Code.InvalidArgument, /password must be 8 to 256/);
      }
      await expect(register(impl, "a.b-c_9", "x".repeat(256))).resolves.toMatchObject({ username: "a.b-c_9" });
      await expect(register(impl, "a".repeat(32), "12345678")).resolves.toBeDefined();
      // Eight code points, more UTF-16 units.
      await expect(register(impl, "emoji", "😀😀😀😀😀😀😀😀")).resolves.toBeDefined();
      await expectCode(login(impl, "", "whatever1"), Code.InvalidArgument, /required/);
      await expectCode(login(impl, "alice", ""), Code.InvalidArgument, /required/);
      await expectCode(login(impl, "bad name", "whatever1"), Code.InvalidArgument, /username/);
      await expectCode(login(impl, "alice", "x".repeat(300)), Code.InvalidArgument, /password/);
    });

    it("applies a custom password policy", async () => {
      const impl = createAuth({ store, signer, scrypt: FAST_SCRYPT, passwordPolicy: { minLength: 12 } });
      await expectCode(register(impl, "carol", "elevenchars"), Code.InvalidArgument, /12 to 256/);
      await expect(register(impl, "carol", "twelve-chars")).resolves.toBeDefined();
    });
  });
}

describe("SQLite user store", () => {
  it("keeps accounts across a restart and stores only hashes", async () => {
    const store = openUserStore(dataDir);
    await register(createAuth({ store, signer, scrypt: FAST_SCRYPT }), "dave", "secret-password");
    store.close();

    const reopened = openUserStore(dataDir);
    const impl = createAuth({ store: reopened, signer, scrypt: FAST_SCRYPT });
    expect((await login(impl, "dave", "secret-password")).username).toBe("dave");
    reopened.close();

    const db = new Database(join(dataDir, USER_DB_FILE), { readonly: true });
    const rows = db.prepare("SELECT * FROM users").all() as Record<string, unknown>[];
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("user_version", { simple: true })).toBe(1);
    db.close();
    expect(rows).toHaveLength(1);
    expect(String(rows[0]!["password_hash"])).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(JSON.stringify(rows)).not.toContain("secret-password");
  });

  it("refuses a database from a newer schema", () => {
    openUserStore(dataDir).close();
    const db = new Database(join(dataDir, USER_DB_FILE));
    db.pragma("user_version = 7");
    db.close();
    expect(() => openUserStore(dataDir)).toThrow(/schema version 7/);
  });
});

describe("login timing", () => {
  it("spends scrypt time on unknown users too", async () => {
    // N=2^15 costs tens of milliseconds even on fast hardware; a lookup miss alone costs well under one.
    const scrypt = { N: 2 ** 15, r: 8, p: 1, keyLength: 32 };
    const impl = createAuth({ store: createMemoryUserStore(), signer, scrypt });
    const time = async (user: string) => {
      const t0 = performance.now();
      await expectCode(login(impl, user, "not-the-password"), Code.Unauthenticated, /invalid username or password/);
      return performance.now() - t0;
    };
    await time("nobody"); // the first call may also wait for the dummy hash
    const unknown = [await time("nobody"), await time("someone"), await time("no_one")];
    expect(Math.min(...unknown)).toBeGreaterThan(10);
  }, 30_000);
});
