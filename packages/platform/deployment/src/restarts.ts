/** A group that exits after the deployment is up is restarted after this, doubling per recent restart… */
const RESTART_BASE_MS = 500;
/** …up to this. */
const RESTART_MAX_MS = 10_000;
const WINDOW_MS = 60_000;
export const DEFAULT_MAX_RESTARTS_PER_MINUTE = 5;

/** When to restart a process that exited: backoff per process, and a limit that calls a crash loop. */
export class RestartPolicy {
  /** When each process was last restarted, within the last minute. */
  private readonly recent = new Map<string, number[]>();

  constructor(
    readonly limit = DEFAULT_MAX_RESTARTS_PER_MINUTE,
    private readonly now: () => number = Date.now,
  ) {}

  /** The delay before restarting `name` (ms), or undefined when it has crash-looped: `limit` restarts within a minute. */
  next(name: string): number | undefined {
    const now = this.now();
    const recent = (this.recent.get(name) ?? []).filter((t) => now - t < WINDOW_MS);
    if (recent.length >= this.limit) return undefined;
    recent.push(now);
    this.recent.set(name, recent);
    return Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (recent.length - 1));
  }
}
