/**
 * A flap schedule as a player's rule for each frame it receives: the frame of tick k arrives
 * between ticks k and k + 1, so the player presses on it when a flap is planned before tick k + 1
 * (the engine applies an input at once; the bird moves at the next tick). One byte per tick,
 * read without allocating: what a load client asks on every frame of thousands of games.
 */
export class FlapBot {
  private readonly planned: Uint8Array;

  /** `flapTicks`: ticks before which to flap (1 = the first tick), in any order; repeats count once. */
  constructor(flapTicks: readonly number[]) {
    let max = 0;
    for (const k of flapTicks) {
      if (!Number.isInteger(k) || k < 1) throw new RangeError(`flap ticks must be integers ≥ 1, got ${k}`);
      if (k > max) max = k;
    }
    this.planned = new Uint8Array(max + 1);
    for (const k of flapTicks) this.planned[k] = 1;
  }

  /** A flap is planned before tick `tick`. */
  flapsBefore(tick: number): boolean {
    return tick < this.planned.length && this.planned[tick] === 1;
  }

  /** Press on the frame of tick `frameTick`: a flap is planned before the next tick. */
  pressOnFrame(frameTick: number): boolean {
    const next = frameTick + 1;
    return next < this.planned.length && this.planned[next] === 1;
  }
}
