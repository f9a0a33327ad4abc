import type { Logger } from "pino";

/** Counts repeated events and logs them at most once per interval instead of once each. */
export interface EventTally {
  /** Counts one event for `reason`. */
  add(reason: string): void;
  /** Every event counted since the tally was created, per reason. */
  totals(): Readonly<Record<string, number>>;
  /** Logs what is still unlogged and stops the timer. */
  close(): void;
}

export interface EventTallyOptions {
  readonly logger: Logger;
  /** The `event` field of every line. */
  readonly event: string;
  readonly message: string;
  readonly level?: "warn" | "info";
  /** Default 5000 ms. */
  readonly intervalMs?: number;
  /** Extra fields of each line (e.g. the current queue length). */
  readonly context?: () => Record<string, number>;
}

/**
 * The first event after a quiet interval is logged at once; further ones are summed and logged
 * once per interval (`{ event, counts: { reason: n }, intervalMs }`); an interval without any ends
 * the episode with one `<event>-stopped` line carrying the episode's total.
 */
export function createEventTally(opts: EventTallyOptions): EventTally {
  const intervalMs = opts.intervalMs ?? 5000;
  const level = opts.level ?? "warn";
  const totals: Record<string, number> = {};
  let counts: Record<string, number> = {};
  let pending = 0;
  let episode = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (pending === 0) return;
    opts.logger[level]({ event: opts.event, counts, intervalMs, ...opts.context?.() }, opts.message);
    counts = {};
    pending = 0;
  };
  const tick = (): void => {
    if (pending > 0) {
      flush();
      return;
    }
    clearInterval(timer);
    timer = undefined;
    opts.logger.info({ event: `${opts.event}-stopped`, total: episode }, `${opts.message}: stopped`);
    episode = 0;
  };
  return {
    add(reason) {
      totals[reason] = (totals[reason] ?? 0) + 1;
      counts[reason] = (counts[reason] ?? 0) + 1;
      pending++;
      episode++;
      if (timer === undefined) {
        flush();
        timer = setInterval(tick, intervalMs);
        timer.unref();
      }
    },
    totals: () => ({ ...totals }),
    close() {
      flush();
      clearInterval(timer);
      timer = undefined;
    },
  };
}
