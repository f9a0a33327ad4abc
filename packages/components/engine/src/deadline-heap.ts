/** What a DeadlineHeap orders by: the deadline, then the order of scheduling. */
export interface HeapEntry {
  readonly deadline: number;
  readonly order: number;
}

/**
 * A min-heap of tasks on (deadline, order) whose keys live in typed arrays beside it: sifting
 * compares numbers in two small contiguous arrays and moves pointers, never reading a task
 * object. With thousands of games, the tasks are scattered over the heap and mostly out of the
 * CPU's caches between their ticks; a heap that read them cost tens of cache misses per tick.
 */
export class DeadlineHeap<T extends HeapEntry> {
  private deadlines = new Float64Array(64);
  private orders = new Float64Array(64);
  private tasks: (T | undefined)[] = [];
  count = 0;

  /** The earliest task, or undefined. */
  peek(): T | undefined {
    return this.count > 0 ? this.tasks[0] : undefined;
  }

  /** The earliest deadline (+∞ when empty). */
  firstDeadline(): number {
    return this.count > 0 ? (this.deadlines[0] as number) : Number.POSITIVE_INFINITY;
  }

  push(task: T): void {
    if (this.count === this.deadlines.length) this.grow();
    const deadline = task.deadline;
    const order = task.order;
    let i = this.count++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.before(parent, deadline, order)) break;
      this.move(parent, i);
      i = parent;
    }
    this.place(i, deadline, order, task);
  }

  /** Removes and returns the earliest task. */
  pop(): T | undefined {
    if (this.count === 0) return undefined;
    const { deadlines, orders, tasks } = this;
    const top = tasks[0];
    const n = --this.count;
    const deadline = deadlines[n] as number;
    const order = orders[n] as number;
    const last = tasks[n] as T;
    tasks[n] = undefined;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.before(r, deadlines[l] as number, orders[l] as number) ? r : l;
      if (!this.before(c, deadline, order)) break;
      this.move(c, i);
      i = c;
    }
    this.place(i, deadline, order, last);
    return top;
  }

  /** Slot `i` comes before (`deadline`, `order`). */
  private before(i: number, deadline: number, order: number): boolean {
    const d = this.deadlines[i] as number;
    return d < deadline || (d === deadline && (this.orders[i] as number) < order);
  }

  /** Slot `to` takes what slot `from` holds. */
  private move(from: number, to: number): void {
    this.deadlines[to] = this.deadlines[from] as number;
    this.orders[to] = this.orders[from] as number;
    this.tasks[to] = this.tasks[from];
  }

  private place(i: number, deadline: number, order: number, task: T): void {
    this.deadlines[i] = deadline;
    this.orders[i] = order;
    this.tasks[i] = task;
  }

  /** Every task in it, emptied. */
  drain(each: (task: T) => void): void {
    for (let i = 0; i < this.count; i++) {
      each(this.tasks[i] as T);
      this.tasks[i] = undefined;
    }
    this.count = 0;
  }

  private grow(): void {
    const deadlines = new Float64Array(this.deadlines.length * 2);
    deadlines.set(this.deadlines);
    const orders = new Float64Array(this.orders.length * 2);
    orders.set(this.orders);
    this.deadlines = deadlines;
    this.orders = orders;
  }
}
