import { TICK_MS } from "@flaplab/physics";
import { DeadlineHeap } from "./deadline-heap.js";
import { type TickClock, realTickClock } from "./tick-clock.js";

export { type TickClock, realTickClock } from "./tick-clock.js";

/** How long a round of due tasks runs before ready I/O gets a turn (default of `sliceMs`). */
export const DEFAULT_SLICE_MS = 2;

/** The grid task starts are moved up to (default of `slotMs`), ms. */
export const DEFAULT_SLOT_MS = 1;

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

/**
 * An object the scheduler calls `onTick` on at each deadline, as it would call a `TickFn`.
 * Scheduling the object itself, not a closure that calls its method, leaves one object fewer
 * (the closure and its context) to reach per tick; with thousands of games each is a cache miss
 * by the time the game's next tick comes round.
 */
export interface TickTarget {
  // biome-ignore lint/suspicious/noConfusingVoidType: as TickFn
  onTick(info: TickInfo): boolean | void;
}

/** A task's handle. */
export interface ScheduledTask {
  /** Where its deadlines count from: the start it was given, moved up to the slot grid. */
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
  /**
   * Called with every run's `TickInfo` just before the task's function (one hook for all tasks:
   * what a measurement of tick lateness needs, without wrapping each task in a closure of its own).
   */
  readonly observe?: (info: TickInfo) => void;
  /**
   * A round of due tasks that has run this long (ms, default 2) stops, lets the I/O that is ready
   * have its turn (new connections, inputs, messages from other processes) and goes on where it
   * stopped. A process that cannot keep up would otherwise accept and read only between rounds
   * that last as long as it is behind (Node accepts one connection per event-loop turn).
   */
  readonly sliceMs?: number;
  /**
   * Task starts are moved up to the next multiple of this (ms, default 1; 0 keeps them as given),
   * so at most `periodMs / slotMs` deadlines a period need a timer of their own, however many
   * tasks there are. Every wake-up of an idle process costs tens of microseconds of CPU; games
   * started at arbitrary times would each need one per tick (≈ 3,000 a second for 100 games),
   * while a game's ticks shifted by less than a millisecond are the same game.
   */
  readonly slotMs?: number;
}

class Task implements ScheduledTask {
  runs = 0;
  skipped = 0;
  active = true;
  /** Next deadline index and time. */
  k = 1;
  /**
   * Starts as a double (NaN), so V8 keeps the field as a double updated in place. Declared without
   * a value, it would start `undefined`, and every tick would store a new heap number in it: a
   * young object referenced from an old task, which every scavenge must visit and copy.
   */
  deadline = Number.NaN;
  /** Deadlines skipped just before the next one. */
  skipNext = 0;

  constructor(
    readonly scheduler: TickScheduler,
    readonly target: TickTarget,
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
 * A cancelled task leaves the heap when its deadline comes up (no search for it).
 */
export class TickScheduler {
  readonly clock: TickClock;
  readonly periodMs: number;
  private readonly onError: (err: unknown, task: ScheduledTask) => void;
  private readonly observe: ((info: TickInfo) => void) | undefined;
  private readonly heap = new DeadlineHeap<Task>();
  /** Tasks scheduled and not stopped (the heap may still hold cancelled ones). */
  private active = 0;
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
  /** The next of `due` to run: below `dueCount` while a round is cut at its slice and waits to go on. */
  private dueNext = 0;
  private readonly sliceMs: number;
  private readonly slotMs: number;
  /** The task whose function is running. */
  private current: Task | undefined = undefined;
  /** The `TickInfo` every run is given (reused). */
  private readonly info = { k: 0, scheduledMs: 0, nowMs: 0, latenessMs: 0, skipped: 0 };

  constructor(options: TickSchedulerOptions = {}) {
    this.clock = options.clock ?? realTickClock;
    this.periodMs = options.periodMs ?? TICK_MS;
    if (!(this.periodMs > 0) || !Number.isFinite(this.periodMs)) {
      throw new RangeError(`periodMs must be a positive number, got ${this.periodMs}`);
    }
    this.observe = options.observe;
    this.sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    if (!(this.sliceMs > 0)) throw new RangeError(`sliceMs must be a positive number, got ${this.sliceMs}`);
    this.slotMs = options.slotMs ?? DEFAULT_SLOT_MS;
    if (!(this.slotMs >= 0) || !Number.isFinite(this.slotMs)) throw new RangeError(`slotMs must be a finite number ≥ 0, got ${this.slotMs}`);
    this.onError =
      options.onError ??
      ((err) => {
        console.error("tick task failed:", err);
      });
  }

  /** Tasks scheduled and not stopped. */
  get size(): number {
    return this.active;
  }

  now(): number {
    return this.clock.now();
  }

  /**
   * Runs `run` (a function, or a target's `onTick`) at `start + k * periodMs` for k = 1, 2, …
   * until it returns false or is cancelled, where `start` is `startMs` moved up to the slot grid
   * (`slotMs`; the task's `startMs`).
   */
  schedule(run: TickFn | TickTarget, startMs: number = this.clock.now()): ScheduledTask {
    const target: TickTarget = typeof run === "function" ? { onTick: run } : run;
    const slot = this.slotMs;
    const start = slot > 0 ? Math.ceil(startMs / slot) * slot : startMs;
    const task = new Task(this, target, start, this.nextOrder++, this.periodMs);
    this.active++;
    this.heap.push(task);
    if (!this.running) this.arm();
    return task;
  }

  /** Stops `task`. */
  cancel(task: ScheduledTask): void {
    if (!(task instanceof Task) || task.scheduler !== this || !task.active) return;
    this.deactivate(task);
    if (!this.running) this.arm();
  }

  private deactivate(task: Task): void {
    task.active = false;
    this.active--;
  }

  /** Stops every task. */
  stop(): void {
    this.heap.drain((task) => {
      if (task.active) this.deactivate(task);
    });
    for (let i = this.dueNext; i < this.dueCount; i++) {
      const task = this.due[i] as Task;
      if (task.active) this.deactivate(task);
    }
    // Called from a task's own run: that task is in neither.
    if (this.current?.active) this.deactivate(this.current);
    this.arm();
  }

  private fire = (): void => {
    this.timer = undefined;
    this.timerDeadline = Number.POSITIVE_INFINITY;
    this.running = true;
    let cut = false;
    try {
      const started = this.clock.now();
      const { due, heap } = this;
      if (this.dueNext >= this.dueCount) {
        // A new round: only the tasks due when it started, each once. A task that is due again
        // (after a stall) waits for the next round, so input and other I/O get their turn between
        // rounds instead of one game ticking back-to-back.
        this.dueCount = 0;
        this.dueNext = 0;
        while (heap.firstDeadline() <= started) {
          const task = heap.pop() as Task;
          if (task.active) due[this.dueCount++] = task;
        }
      }
      // An earlier task may cancel a later one. Each task starts when the one before it ended.
      let now = started;
      while (this.dueNext < this.dueCount) {
        const task = due[this.dueNext] as Task;
        due[this.dueNext++] = undefined;
        if (task.active) now = this.run(task, now);
        if (now - started >= this.sliceMs && this.dueNext < this.dueCount) {
          cut = true;
          break;
        }
      }
    } finally {
      if (!cut) {
        for (let i = this.dueNext; i < this.dueCount; i++) this.due[i] = undefined;
        this.dueCount = 0;
        this.dueNext = 0;
      }
      this.running = false;
      if (cut) this.goOn();
      else this.arm();
    }
  };

  /**
   * The round was cut at its slice: it goes on once ready I/O has had its turn. `fire` cleared
   * the timer, and nothing arms one while the round waits (`arm` sees the tasks left in `due`).
   */
  private goOn(): void {
    if (this.clock.defer) this.clock.defer(this.fire);
    else this.timer = this.clock.setTimer(this.fire, 0);
  }

  /** Runs `task`, which starts at `now`; returns the time it ended. */
  private run(task: Task, now: number): number {
    const info = this.info;
    info.k = task.k;
    info.scheduledMs = task.deadline;
    info.nowMs = now;
    info.latenessMs = now - task.deadline;
    info.skipped = task.skipNext;
    task.skipNext = 0;
    task.runs++;
    if (this.observe !== undefined) this.observe(info);
    // biome-ignore lint/suspicious/noConfusingVoidType: what a TickFn returns
    let keep: boolean | void;
    this.current = task;
    try {
      keep = task.target.onTick(info);
    } catch (err) {
      if (task.active) this.deactivate(task);
      this.onError(err, task);
      return this.clock.now();
    } finally {
      this.current = undefined;
    }
    const after = this.clock.now();
    if (keep === false && task.active) this.deactivate(task);
    if (!task.active) return after;
    // The next deadline; when even that one is a whole period gone, jump to the latest one due.
    let k = task.k + 1;
    const due = Math.floor((after - task.startMs) / this.periodMs);
    if (due > k) {
      task.skipped += due - k;
      task.skipNext = due - k;
      k = due;
    }
    task.k = k;
    task.deadline = task.startMs + k * this.periodMs;
    this.heap.push(task);
    return after;
  }

  private arm(): void {
    // A cut round (tasks left in `due`) goes on first; it arms the timer when it is done.
    if (this.dueNext < this.dueCount) return;
    // Cancelled tasks at the top leave now, so they arm no timer.
    const heap = this.heap;
    while (heap.count > 0 && !(heap.peek() as Task).active) heap.pop();
    const deadline = heap.firstDeadline();
    if (deadline === this.timerDeadline) return;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerDeadline = deadline;
    if (deadline === Number.POSITIVE_INFINITY) return;
    // An early wake-up (a clock that rounds down) finds nothing due and re-arms.
    const delay = Math.max(0, deadline - this.clock.now());
    this.timer = this.clock.setTimer(this.fire, delay);
  }
}
