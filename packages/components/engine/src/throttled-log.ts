/** The part of a pino logger a ThrottledWarning writes to. */
export interface WarnLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * A warning that may come in floods (refused games, failed store writes): the first is logged at
 * once, then at most one line per `intervalMs`, carrying in `countField` how many were not
 * logged since the line before.
 */
export class ThrottledWarning {
  private lastLogMs = Number.NEGATIVE_INFINITY;
  private unlogged = 0;

  constructor(
    private readonly logger: WarnLogger | undefined,
    private readonly clock: () => number,
    private readonly intervalMs: number,
    private readonly countField: string,
  ) {}

  warn(fields: object, msg: string): void {
    const now = this.clock();
    if (now - this.lastLogMs < this.intervalMs) {
      this.unlogged++;
      return;
    }
    this.logger?.warn({ ...fields, [this.countField]: this.unlogged }, msg);
    this.lastLogMs = now;
    this.unlogged = 0;
  }
}
