import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe } from "vitest";
import { openPostgresScoreStore, openSqliteScoreStore, type ScoreStore } from "../src/index.js";
import { startPostgresServer, type PostgresServer } from "./postgres-server.js";

export const STORE_KINDS = ["sqlite", "postgres"] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

export interface StoreFixture {
  readonly kind: StoreKind;
  /**
   * Opens a store on this test's own location (a new SQLite directory or a new Postgres database).
   * Opening again reaches the same runs. Every store opened is closed after the test.
   */
  open(): Promise<ScoreStore>;
}

/** Declares `body` once per kind of store, so both are held to the same behaviour. */
export function describeEachStore(body: (stores: StoreFixture) => void): void {
  for (const kind of STORE_KINDS) {
    describe(`with the ${kind} store`, () => {
      let server: PostgresServer | undefined;
      let location = "";
      const opened: ScoreStore[] = [];
      if (kind === "postgres") {
        beforeAll(async () => {
          server = await startPostgresServer();
        }, 120_000);
        afterAll(async () => {
          await server?.destroy();
        }, 60_000);
      }
      beforeEach(async () => {
        location = server ? await server.createDatabase() : await mkdtemp(join(tmpdir(), "flaplab-score-"));
      });
      afterEach(async () => {
        for (const store of opened.splice(0)) await store.close();
        if (!server) await rm(location, { recursive: true, force: true });
      });
      body({
        kind,
        async open() {
          const store = server ? await openPostgresScoreStore(location) : openSqliteScoreStore(location);
          opened.push(store);
          return store;
        },
      });
    });
  }
}
