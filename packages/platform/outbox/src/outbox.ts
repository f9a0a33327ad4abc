import { openDurableSqlite } from "@flaplab/sqlite";

/** What a delivery attempt says of an item: taken (gone from the outbox), or refused for good. */
export type Delivery = "delivered" | "refused";

/** The logging the outbox needs; a pino logger fits. */
export interface OutboxLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface OutboxOptions<T> {
  /** The SQLite file (created when missing). */
  readonly file: string;
  /**
   * Delivers one item: resolves "delivered" when it was taken (or had been already), "refused"
   * when it never will be (it is dropped, and logged); throws to be tried again later.
   */
  readonly deliver: (item: T, id: string) => Promise<Delivery>;
  /** Wait before the first retry, doubling per failed round up to `maxRetryMs` (default 500 and 10 000 ms). */
  readonly firstRetryMs?: number;
  readonly maxRetryMs?: number;
  readonly logger?: OutboxLogger;
}

export interface FlushResult {
  readonly delivered: number;
  readonly refused: number;
  /** Items still waiting (their delivery failed). */
  readonly left: number;
}

/**
 * Items that must reach somewhere that is down, kept in SQLite (WAL, synchronous=FULL: an added
 * item survives a crash) and delivered by a retry loop, oldest first, until the delivery function
 * takes them. An item is keyed by id and added once; it leaves only when delivered or refused, so
 * with an idempotent receiver each one arrives exactly once. Items left by a previous process are
 * delivered when `start` runs.
 */
export class DurableOutbox<T> {
  private readonly db: ReturnType<typeof openDurableSqlite>;
  private readonly insert;
  private readonly remove;
  private readonly list;
  private readonly count;
  private readonly deliver: (item: T, id: string) => Promise<Delivery>;
  private readonly firstRetryMs: number;
  private readonly maxRetryMs: number;
  private readonly logger: OutboxLogger | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private retryMs: number;
  private running: Promise<FlushResult> | undefined;
  private started = false;
  private closed = false;

  constructor(options: OutboxOptions<T>) {
    this.db = openDurableSqlite({
      file: options.file,
      migrations: [`CREATE TABLE outbox (id TEXT PRIMARY KEY, item TEXT NOT NULL, added_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0);`],
    });
    this.insert = this.db.prepare("INSERT OR IGNORE INTO outbox (id, item, added_at) VALUES (?, ?, ?)");
    this.remove = this.db.prepare("DELETE FROM outbox WHERE id = ?");
    this.list = this.db.prepare("SELECT id, item, attempts FROM outbox ORDER BY added_at, id");
    this.count = this.db.prepare("SELECT count(*) AS n FROM outbox");
    this.deliver = options.deliver;
    this.firstRetryMs = options.firstRetryMs ?? 500;
    this.maxRetryMs = options.maxRetryMs ?? 10_000;
    this.retryMs = this.firstRetryMs;
    this.logger = options.logger;
  }

  /** Items waiting. */
  get size(): number {
    return (this.count.get() as { n: number }).n;
  }

  /** Keeps `item` under `id` (a second add of an id is ignored); it is on disk when this returns. */
  add(id: string, item: T): void {
    if (this.closed) throw new Error("the outbox is closed");
    this.insert.run(id, JSON.stringify(item), Date.now());
    this.retryMs = this.firstRetryMs;
    this.schedule(this.firstRetryMs);
  }

  /** Starts the retry loop; items a previous process left are tried at once. */
  start(): void {
    this.started = true;
    if (this.size > 0) {
      this.logger?.info({ event: "outbox-pending", items: this.size }, "outbox items from before are being delivered");
      this.schedule(0);
    }
  }

  /** One delivery attempt of every waiting item, oldest first. */
  flush(): Promise<FlushResult> {
    this.running ??= this.attempt().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the loop; waiting items stay on disk for the next process. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
    this.db.close();
  }

  private schedule(ms: number): void {
    if (!this.started || this.closed || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush().then((r) => {
        if (r.left === 0) {
          this.retryMs = this.firstRetryMs;
          return;
        }
        this.schedule(this.retryMs);
        this.retryMs = Math.min(this.maxRetryMs, this.retryMs * 2);
      });
    }, ms);
    this.timer.unref();
  }

  private async attempt(): Promise<FlushResult> {
    let delivered = 0;
    let refused = 0;
    let left = 0;
    const rows = this.list.all() as Array<{ id: string; item: string; attempts: number }>;
    for (const row of rows) {
      if (this.closed) break;
      let outcome: Delivery;
      try {
        outcome = await this.deliver(JSON.parse(row.item) as T, row.id);
      } catch (err) {
        left++;
        this.db.prepare("UPDATE outbox SET attempts = attempts + 1 WHERE id = ?").run(row.id);
        if (row.attempts === 0 || (row.attempts + 1) % 10 === 0) {
          this.logger?.warn({ event: "outbox-retry", id: row.id, attempts: row.attempts + 1, err: (err as Error).message }, "outbox delivery failed; will retry");
        }
        continue;
      }
      this.remove.run(row.id);
      if (outcome === "delivered") {
        delivered++;
        this.logger?.info({ event: "outbox-delivered", id: row.id, attempts: row.attempts + 1 }, "outbox item delivered");
      } else {
        refused++;
        this.logger?.error({ event: "outbox-refused", id: row.id, item: row.item }, "outbox item refused for good; dropped");
      }
    }
    return { delivered, refused, left };
  }
}
