import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The deadline and abort signal of one call's handler context, with the behaviour of Connect's
 * `createHandlerContext` but not its cost (two linked AbortControllers and a deadline timer per
 * call, and a DOMException when it is aborted at the end): the signal exists once a handler reads
 * `signal`; it then aborts at the deadline (DeadlineExceeded), when one of the call's other ends
 * fires (`listen`: the caller's signal, the client going away, shutdown), and when the call is over
 * (`abort`). The runtime's direct calls and the host's networked calls extend it.
 */
export abstract class CallSignal {
  private readonly deadline: number | undefined;
  private controller: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ended: { reason: unknown } | undefined;

  protected constructor(timeoutMs: number | undefined) {
    // Whole milliseconds, as Connect's handler context keeps it (a Date): a gRPC timeout in µs or ns may have fractions.
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) this.deadline = Math.trunc(Date.now() + timeoutMs);
  }

  /** Why the call is already over when a handler first reads `signal` (a reason), or undefined. */
  protected abstract endedBefore(): { reason: unknown } | undefined;
  /** Starts watching the call's other ends; `stop` ends the call with a reason. */
  protected abstract listen(stop: (reason: unknown) => void): void;
  /** Stops watching them. */
  protected abstract unlisten(): void;

  timeoutMs(): number | undefined {
    return this.deadline === undefined ? undefined : this.deadline - Date.now();
  }

  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    this.controller = new AbortController();
    const { deadline, ended } = this;
    const before = ended ?? this.endedBefore();
    if (before) this.stop(before.reason);
    else if (deadline !== undefined && deadline <= Date.now()) this.stop(deadlineExceeded());
    else {
      this.listen((reason) => this.stop(reason));
      if (deadline !== undefined) this.timer = setTimeout(() => this.stop(deadlineExceeded()), deadline - Date.now());
    }
    return this.controller.signal;
  }

  /** Ends the call: aborts the signal if a handler has it, with `reason` ("the call is over" when none). */
  abort(reason?: unknown): void {
    if (this.ended) return;
    this.ended = { reason };
    this.stop(reason);
  }

  private stop(reason: unknown): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.controller === undefined) return;
    this.unlisten();
    if (!this.controller.signal.aborted) this.controller.abort(reason ?? new ConnectError("the call is over", Code.Canceled));
  }
}

export function deadlineExceeded(): ConnectError {
  return new ConnectError("the operation timed out", Code.DeadlineExceeded);
}
