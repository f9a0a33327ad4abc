import type { InputEffect } from "@flaplab/physics";

/** One accepted key press. */
export interface InputRecord {
  readonly seq: number;
  readonly clientTimeMs: number;
  /** Table clock when the input arrived, ms. */
  readonly receivedAtMs: number;
  /** The next tick: the first whose movement the input affects (a flap sets the velocity at once). */
  readonly tick: number;
  readonly effect: InputEffect;
}

const EFFECTS: readonly InputEffect[] = ["started", "flap", "ignored"];
const FIELDS = 4; // seq, clientTimeMs, receivedAtMs, tick
const INITIAL_SLOTS = 16;

/**
 * A game's accepted inputs in arrival order, the oldest dropped beyond `capacity`: a ring of
 * numbers, not of objects, so that recording an input allocates nothing once the ring has grown
 * (it doubles from 16 slots up to `capacity`) and thousands of games' logs add nothing for the
 * garbage collector to trace. Records are made when read (`at`, iteration, `toArray`).
 */
export class InputLog implements Iterable<InputRecord> {
  private numbers: Float64Array;
  private effects: Uint8Array;
  /** Slot of the oldest record. */
  private head = 0;
  private count = 0;

  /** `capacity` ≥ 0: how many records are kept (0 keeps none). */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`input log capacity must be a whole number ≥ 0, got ${capacity}`);
    const slots = Math.min(INITIAL_SLOTS, capacity);
    this.numbers = new Float64Array(slots * FIELDS);
    this.effects = new Uint8Array(slots);
  }

  get length(): number {
    return this.count;
  }

  push(seq: number, clientTimeMs: number, receivedAtMs: number, tick: number, effect: InputEffect): void {
    if (this.capacity === 0) return;
    const slots = this.effects.length;
    let slot: number;
    if (this.count < slots) {
      slot = (this.head + this.count) % slots;
      this.count++;
    } else if (slots < this.capacity) {
      this.grow(Math.min(this.capacity, slots * 2));
      slot = this.count++;
    } else {
      // Full at capacity: overwrite the oldest.
      slot = this.head;
      this.head = (this.head + 1) % slots;
    }
    const at = slot * FIELDS;
    this.numbers[at] = seq;
    this.numbers[at + 1] = clientTimeMs;
    this.numbers[at + 2] = receivedAtMs;
    this.numbers[at + 3] = tick;
    this.effects[slot] = EFFECTS.indexOf(effect);
  }

  /** The record at `index` (negative counts from the newest, as `Array.prototype.at`). */
  at(index: number): InputRecord | undefined {
    const i = index < 0 ? this.count + index : index;
    if (!Number.isInteger(i) || i < 0 || i >= this.count) return undefined;
    const slot = (this.head + i) % this.effects.length;
    const at = slot * FIELDS;
    return {
      seq: this.numbers[at] as number,
      clientTimeMs: this.numbers[at + 1] as number,
      receivedAtMs: this.numbers[at + 2] as number,
      tick: this.numbers[at + 3] as number,
      effect: EFFECTS[this.effects[slot] as number] as InputEffect,
    };
  }

  toArray(): InputRecord[] {
    return Array.from(this);
  }

  *[Symbol.iterator](): Iterator<InputRecord> {
    for (let i = 0; i < this.count; i++) yield this.at(i) as InputRecord;
  }

  /** Moves the records, oldest first, into `slots` slots. */
  private grow(slots: number): void {
    const numbers = new Float64Array(slots * FIELDS);
    const effects = new Uint8Array(slots);
    const old = this.effects.length;
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % old;
      numbers.set(this.numbers.subarray(from * FIELDS, from * FIELDS + FIELDS), i * FIELDS);
      effects[i] = this.effects[from] as number;
    }
    this.numbers = numbers;
    this.effects = effects;
    this.head = 0;
  }
}
