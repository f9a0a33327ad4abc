import { TICK_MS } from "@flaplab/physics";

/** The time source and the one timer a TickScheduler uses. */
export interface TickClock {
  /** Monotonic ms (performance.now()). */
  now(): number;
  /** Calls `fn` once, `delayMs` (fractional, ≥ 0) from now or as soon after as the clock can. */
  setTimer(fn: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
}

/**
 * performance.now() and setTimeout: whole milliseconds, rounded up (a timer never fires before
 * its deadline), so a tick runs 0–1 ms after it is due before any work (`createPreciseTickClock`
 * is finer).
 */
export const realTickClock: TickClock = {
  now: () => performance.now(),
  setTimer: (fn, delayMs) => setTimeout(fn, Math.ceil(delayMs)),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** One run of a task. */
export interface TickInfo {
  /** Which deadline this is: 1 for `startMs + periodMs`, k for `startMs + k * periodMs`. */
  readonly k: number;
  readonly scheduledMs: number;
  readonly nowMs: number;
  /** nowMs − scheduledMs, ≥ 0. */
  readonly latenessMs: number;
  /** Deadlines skipped just before this one because the process fell behind. */
  readonly skipped: number;
}

/**
 * Called at each deadline. Returning false stops the task. `info` is one object the scheduler
 * reuses for every run (no allocation per tick): read it during the call, copy what you keep.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a tick function may return nothing at all (keep going)
export type TickFn = (info: TickInfo) => boolean | void;

/** A task's handle. */
export interface ScheduledTask {
  readonly startMs: number;
  /** Runs so far. */
  readonly runs: number;
  /** Deadlines skipped so far. */
  readonly skipped: number;
  /** False once cancelled, stopped by its function, or failed. */
  readonly active: boolean;
  /** Stops the task; idempotent. */
  cancel(): void;
}

export interface TickSchedulerOptions {
  readonly clock?: TickClock;
  /** Period, ms (default 33, FlappyGo's tick). */
  readonly periodMs?: number;
  /** A task function threw: the task is stopped. Default: console.error. */
  readonly onError?: (err: unknown, task: ScheduledTask) => void;
}

class Task implements ScheduledTask {
  runs = 0;
  skipped = 0;
  active = true;
  /** Next deadline index and time. */
  k = 1;
  deadline: number;
  /** Position in the heap, -1 when not in it. */
  slot = -1;
  /** Deadlines skipped just before the next one. */
  skipNext = 0;

  constructor(
    readonly scheduler: TickScheduler,
    readonly fn: TickFn,
    readonly startMs: number,
    readonly order: number,
    periodMs: number,
  ) {
    this.deadline = startMs + periodMs;
  }

  cancel(): void {
    this.scheduler.cancel(this);
  }
}

/**
 * Drift-free periodic ticks for many tasks (games) on one timer. Task deadlines are
 * `startMs + k * periodMs` on the clock, never re-armed intervals, so errors do not add up; a
 * min-heap keeps the earliest deadline and a single timer is armed for it. A task more than one
 * whole period behind skips the deadlines it missed (counted), as Go's time.Ticker drops ticks.
 */
export class TickScheduler {
  readonly clock: TickClock;
  readonly periodMs: number;
  private readonly onError: (err: unknown, task: ScheduledTask) => void;
  private readonly heap: Task[] = [];
  private timer: unknown = undefined;
  private timerDeadline = Number.POSITIVE_INFINITY;
  private nextOrder = 0;
  private running = false;
  /**
   * The tasks due in the current round, `due[0, dueCount)`. The array is reused and never
   * truncated (`length = 0` would drop its backing store, and every round would allocate a new
   * one), so a round allocates nothing.
   */
  private readonly due: (Task | undefined)[] = [];
  private dueCount = 0;
  /** The `TickInfo` every run is given (reused). */
  private readonly info = { k: 0, scheduledMs: 0, nowMs: 0, latenessMs: 0, skipped: 0 };

  constructor(options: TickSchedulerOptions = {}) {
    this.clock = options.clock ?? realTickClock;
    this.periodMs = options.periodMs ?? TICK_MS;
    if (!(this.periodMs > 0) || !Number.isFinite(this.periodMs)) {
      throw new RangeError(`periodMs must be a positive number, got ${this.periodMs}`);
    }
    this.onError =
      options.onError ??
      ((err) => {
        console.error("tick task failed:", err);
      });
  }

  /** Tasks scheduled and not stopped. */
  get size(): number {
    return this.heap.length;
  }

  now(): number {
    return this.clock.now();
  }

  /** Runs `fn` at `startMs + k * periodMs` for k = 1, 2, … until it returns false or is cancelled. */
  schedule(fn: TickFn, startMs: number = this.clock.now()): ScheduledTask {
    const task = new Task(this, fn, startMs, this.nextOrder++, this.periodMs);
    this.push(task);
    if (!this.running) this.arm();
    return task;
  }

  /** Stops `task`. */
  cancel(task: ScheduledTask): void {
    if (!(task instanceof Task) || task.scheduler !== this || !task.active) return;
    task.active = false;
    if (task.slot >= 0) this.removeAt(task.slot);
    if (!this.running) this.arm();
  }

  /** Stops every task. */
  stop(): void {
    for (const task of this.heap) {
      task.active = false;
      task.slot = -1;
    }
    this.heap.length = 0;
    this.arm();
  }

  private fire = (): void => {
    this.timer = undefined;
    this.timerDeadline = Number.POSITIVE_INFINITY;
    this.running = true;
    try {
      // Only the tasks due when this callback started, each once: a task that is due again
      // (after a stall) waits for the next round, so input and other I/O get their turn between
      // rounds instead of one game ticking back-to-back.
      const started = this.clock.now();
      const due = this.due;
      while (this.heap[0] && this.heap[0].deadline <= started) {
        due[this.dueCount++] = this.heap[0];
        this.removeAt(0);
      }
      // An earlier task may cancel a later one.
      for (let i = 0; i < this.dueCount; i++) {
        const task = due[i] as Task;
        due[i] = undefined;
        if (task.active) this.run(task, this.clock.now());
      }
    } finally {
      for (let i = 0; i < this.dueCount; i++) this.due[i] = undefined;
      this.dueCount = 0;
      this.running = false;
      this.arm();
    }
  };

  private run(task: Task, now: number): void {
    const info = this.info;
    info.k = task.k;
    info.scheduledMs = task.deadline;
    info.nowMs = now;
    info.latenessMs = now - task.deadline;
    info.skipped = task.skipNext;
    task.skipNext = 0;
    task.runs++;
    // biome-ignore lint/suspicious/noConfusingVoidType: what a TickFn returns
    let keep: boolean | void;
    try {
      keep = task.fn(info);
    } catch (err) {
      task.active = false;
      this.onError(err, task);
      return;
    }
    if (keep === false) task.active = false;
    if (!task.active) return;
    // The next deadline; when even that one is a whole period gone, jump to the latest one due.
    let k = task.k + 1;
    const after = this.clock.now();
    const due = Math.floor((after - task.startMs) / this.periodMs);
    if (due > k) {
      task.skipped += due - k;
      task.skipNext = due - k;
      k = due;
    }
    task.k = k;
    task.deadline = task.startMs + k * this.periodMs;
    this.push(task);
  }

  private arm(): void {
    const first = this.heap[0];
    const deadline = first ? first.deadline : Number.POSITIVE_INFINITY;
    if (deadline === this.timerDeadline) return;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerDeadline = deadline;
    if (!first) return;
    // An early wake-up (a clock that rounds down) finds nothing due and re-arms.
    const delay = Math.max(0, deadline - this.clock.now());
    this.timer = this.clock.setTimer(this.fire, delay);
  }

  // Min-heap on (deadline, order).

  private less(a: Task, b: Task): boolean {
    return a.deadline < b.deadline || (a.deadline === b.deadline && a.order < b.order);
  }

  private push(task: Task): void {
    task.slot = this.heap.length;
    this.heap.push(task);
    this.up(task.slot);
  }

  private removeAt(i: number): void {
    const heap = this.heap;
    const task = heap[i] as Task;
    const last = heap.pop() as Task;
    task.slot = -1;
    if (last === task) return;
    heap[i] = last;
    last.slot = i;
    this.down(i);
    this.up(last.slot);
  }

  private up(i: number): void {
    const heap = this.heap;
    const task = heap[i] as Task;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Task;
      if (!this.less(task, p)) break;
      heap[i] = p;
      p.slot = i;
      i = parent;
    }
    heap[i] = task;
    task.slot = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const task = heap[i] as Task;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(heap[r] as Task, heap[l] as Task)) c = r;
      const child = heap[c] as Task;
      if (!this.less(child, task)) break;
      heap[i] = child;
      child.slot = i;
      i = c;
    }
    heap[i] = task;
    task.slot = i;
  }
}
