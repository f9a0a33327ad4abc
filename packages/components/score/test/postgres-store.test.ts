// What only the Postgres store has to get right: migrating from several processes at once, a
// database that goes away and comes back, TLS. The behaviour both stores share is in score.test.ts.
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import pg from "pg";
import { generate } from "selfsigned";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createScore,
  openPostgresScoreStore,
  openScoreStore,
  postgresPoolConfig,
  SCORE_DB_FILE,
  SCORE_SCHEMA_VERSION,
  StoreUnavailableError,
  type ScoreStore,
  type StoredRun,
} from "../src/index.js";
import { expectCode, record, scores } from "./helpers.js";
import { POSTGRES_PASSWORD, startPostgresServer, type PostgresServer } from "./postgres-server.js";

let server: PostgresServer;
let dir: string;
let certFile: string;
let databaseUrl: string;
const opened: ScoreStore[] = [];

/** Name of this test's database. */
const database = () => new URL(databaseUrl).pathname.slice(1);

async function open(url = databaseUrl, options: Parameters<typeof openPostgresScoreStore>[1] = {}): Promise<ScoreStore> {
  const store = await openPostgresScoreStore(url, options);
  opened.push(store);
  return store;
}

const run = (gameId: string, extra: Partial<StoredRun> = {}): StoredRun => ({
  gameId,
  username: "alice",
  score: 7,
  ticks: 402,
  seed: 6977347407732442987n,
  finishedAt: 1_000,
  ...extra,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-score-pg-"));
  // A self-signed certificate for 127.0.0.1: the server offers TLS, and a client trusts it only
  // when told to through sslrootcert.
  const now = Date.now();
  const pems = await generate([{ name: "commonName", value: "FlapLab test database" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 24 * 3600_000),
    extensions: [{ name: "subjectAltName", altNames: [{ type: 7 as const, ip: "127.0.0.1" }] }],
  });
  certFile = join(dir, "server-cert.pem");
  await writeFile(certFile, pems.cert);
  server = await startPostgresServer({ tls: { cert: pems.cert, key: pems.private } });
}, 120_000);

afterAll(async () => {
  await server?.destroy();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

beforeEach(async () => {
  databaseUrl = await server.createDatabase();
});

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

describe("Postgres score store", () => {
  it("is what openScoreStore gives with a database URL", async () => {
    const store = await openScoreStore({ dataDir: dir, databaseUrl });
    opened.push(store);
    expect(await store.insertRun(run("g1"))).toBe(true);
    expect(existsSync(join(dir, SCORE_DB_FILE))).toBe(false);
    const { rows } = await server.sql(database(), "SELECT game_id, seed FROM runs");
    expect(rows).toEqual([{ game_id: "g1", seed: "6977347407732442987" }]);
  });

  it("creates the schema: BIGINT seed and finish time, an insertion order, both indexes, a version", async () => {
    await open();
    const columns = await server.sql(
      database(),
      "SELECT column_name, data_type, is_identity FROM information_schema.columns WHERE table_name = 'runs' ORDER BY ordinal_position",
    );
    expect(columns.rows.map((c) => `${c.column_name}:${c.data_type}${c.is_identity === "YES" ? ":identity" : ""}`)).toEqual([
      "game_id:text",
      "username:text",
      "score:integer",
      "ticks:integer",
      "seed:bigint",
      "finished_at:bigint",
      "seq:bigint:identity",
    ]);
    const indexes = await server.sql(database(), "SELECT indexname FROM pg_indexes WHERE tablename = 'runs' ORDER BY indexname");
    expect(indexes.rows.map((r) => r.indexname)).toEqual(["runs_by_user", "runs_leaderboard", "runs_pkey"]);
    const versions = await server.sql(database(), "SELECT version FROM score_schema_migrations");
    expect(versions.rows).toEqual([{ version: SCORE_SCHEMA_VERSION }]);
  });

  it("migrates once when several processes open the same database at once", async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => open()));
    const results = await Promise.all(stores.map((store) => store.insertRun(run("shared"))));
    expect(results.filter((ok) => ok)).toHaveLength(1);
    const versions = await server.sql(database(), "SELECT version FROM score_schema_migrations");
    expect(versions.rows).toEqual([{ version: SCORE_SCHEMA_VERSION }]);
    // Opening a migrated database again changes nothing.
    expect(await (await open()).getRun("shared")).toEqual(run("shared"));
  });

  it("refuses a database whose schema is newer than the code and leaves it alone", async () => {
    await (await open()).insertRun(run("g1"));
    await server.sql(database(), "INSERT INTO score_schema_migrations (version) VALUES (99)");
    await expect(open()).rejects.toThrow(/schema version 99, newer than this code \(1\)/);
    const versions = await server.sql(database(), "SELECT version FROM score_schema_migrations ORDER BY version");
    expect(versions.rows.map((r) => r.version)).toEqual([1, 99]);
  });

  it("keeps runs across a Postgres restart", async () => {
    const first = await open();
    await first.insertRun(run("before-restart"));
    await first.close();
    await server.stop();
    await server.start();
    expect(await (await open()).getRun("before-restart")).toEqual(run("before-restart"));
  });

  it("answers Unavailable while the database is down, keeps running, and recovers when it is back", async () => {
    const errors: Error[] = [];
    const store = await open(databaseUrl, { onConnectionError: (err) => errors.push(err) });
    let clock = 1_000;
    const impl = createScore({ store, clock: () => clock++ });
    await record(impl, "alice", { gameId: "up-1", score: 3 });

    await server.stop();
    try {
      const err = await expectCode(record(impl, "alice", { gameId: "down-1", score: 5 }), Code.Unavailable, /score database is unavailable/);
      // The message may reach a player's screen: no addresses.
      expect(err.rawMessage).not.toContain("127.0.0.1");
      await expectCode(scores(impl, "alice"), Code.Unavailable, /score database is unavailable/);
      // The pooled connection the server closed was reported, not thrown.
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await server.start();
    }

    await record(impl, "alice", { gameId: "up-2", score: 9 });
    expect((await scores(impl, "alice")).ownRuns.map((r) => r.gameId)).toEqual(["up-2", "up-1"]);
  });

  it("fails to open with a clear error, without the password, when the database cannot be reached", async () => {
    const closed = new URL(databaseUrl);
    closed.port = "1";
    const err = await open(closed.href).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(/^cannot reach the score database 127\.0\.0\.1:1\/test_\d+: ECONNREFUSED/);
    expect((err as Error).message).not.toContain(POSTGRES_PASSWORD);
  });

  describe("over TLS", () => {
    it("connects with sslmode=require when the certificate is trusted, and is encrypted", async () => {
      const url = server.url(database(), { sslmode: "require", sslrootcert: certFile });
      const store = await open(url);
      expect(await store.insertRun(run("tls-1"))).toBe(true);
      expect(await store.getRun("tls-1")).toEqual(run("tls-1"));
      const client = new pg.Client(postgresPoolConfig(url));
      await client.connect();
      try {
        const { rows } = await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
        expect(rows).toEqual([{ ssl: true }]);
      } finally {
        await client.end();
      }
    });

    it("refuses a server certificate that no trusted CA signed", async () => {
      await expect(open(server.url(database(), { sslmode: "require" }))).rejects.toThrow(/cannot reach the score database .*self-signed certificate/);
    });
  });
});
