import { Code, ConnectError } from "@connectrpc/connect";
import { deadlineExceeded } from "@flaplab/component";

/**
 * How one call of the runtime's own clients (connect-h1.ts, grpc-h2.ts) ends: exactly once, by its
 * answer, an error, its deadline or the caller's abort signal. Ending stops the deadline timer and
 * the abort listener; a failure also cancels the transport's request (`cancel`).
 */
export class CallOutcome<T> {
  private settled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the deadline passes (performance.now()), if the call has one. */
  private deadline: number | undefined;
  private readonly onAbort = (): void => this.fail(ConnectError.from(this.signal?.reason, Code.Canceled));

  constructor(
    private readonly resolve: (value: T) => void,
    private readonly reject: (err: ConnectError) => void,
    private readonly signal: AbortSignal | undefined,
    private readonly cancel: () => void,
  ) {}

  /** Starts the deadline and listens to the caller's signal; false when the call has already failed (the signal was aborted). */
  start(timeoutMs: number | undefined): boolean {
    if (timeoutMs !== undefined) {
      this.deadline = performance.now() + timeoutMs;
      this.timer = setTimeout(() => this.fail(deadlineExceeded()), timeoutMs);
    }
    if (this.signal !== undefined) {
      if (this.signal.aborted) {
        this.onAbort();
        return false;
      }
      this.signal.addEventListener("abort", this.onAbort);
    }
    return true;
  }

  /**
   * Whether the call's deadline has passed, or is at most `slackMs` away: a server that enforces
   * the same deadline (sent with the call) counts it from when the request reached it, and may end
   * the call a moment before this side's timer, which fires up to a millisecond late, runs.
   */
  nearDeadline(slackMs: number): boolean {
    return this.deadline !== undefined && performance.now() >= this.deadline - slackMs;
  }

  /** Ends the call with `err` and cancels its request, unless it has ended already. */
  fail(err: ConnectError): void {
    if (this.settled) return;
    this.end();
    this.cancel();
    this.reject(err);
  }

  /** Ends the call with what `read` makes of the answer (a throw of `read` is the call's error), unless it has ended already. */
  succeed(read: () => T): void {
    if (this.settled) return;
    this.end();
    try {
      this.resolve(read());
    } catch (err) {
      this.reject(ConnectError.from(err));
    }
  }

  private end(): void {
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}

/** Node error codes of a connection or stream that went away under a call. */
const ABORTED = new Set(["ECONNRESET", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END", "ERR_HTTP2_INVALID_STREAM"]);
const UNAVAILABLE = new Set(["ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED"]);

/** A Node socket, HTTP or HTTP/2 error as Connect-ES's Node transports report it. */
export function fromNodeError(err: unknown): ConnectError {
  const code = (err as { code?: unknown }).code;
  const c = typeof code === "string" && ABORTED.has(code) ? Code.Aborted : typeof code === "string" && UNAVAILABLE.has(code) ? Code.Unavailable : Code.Internal;
  const ce = ConnectError.from(err, c);
  if (ce !== err) ce.cause = err;
  return ce;
}
