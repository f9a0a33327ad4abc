/** FlappyGo's engine constants. */

/** Tick period: FlappyGo's `1000/30` in integer milliseconds. */
export const TICK_MS = 33;
export const PIPE_WIDTH = 72;
/** Added to the bird's velocity every tick (px/tick²). */
export const GRAVITY = 0.25;
/** A flap sets the velocity to `-FLAP_VELOCITY` (px/tick, upwards). */
export const FLAP_VELOCITY = 4.6;
/** Pipe speed at the start of a game (px/tick). */
export const START_PIPE_SPEED = 2;
/** Added to the pipe speed on every tick whose score is a multiple of 5, until MAX_PIPE_SPEED. */
export const PIPE_SPEED_STEP = 0.5;
export const MAX_PIPE_SPEED = 5;
/** The bird's left edge, px from the viewport's left edge. */
export const BIRD_X = 50;
/** The bird's top edge when a game is created, px from the top. */
export const START_BIRD_Y = 200;

export interface Viewport {
  readonly width: number;
  readonly height: number;
}

export interface BirdBox {
  readonly width: number;
  readonly height: number;
}

/** The browser's game container. */
export const DEFAULT_VIEWPORT: Viewport = Object.freeze({ width: 480, height: 640 });
/** The browser's `#bird` CSS box. */
export const DEFAULT_BIRD: BirdBox = Object.freeze({ width: 34, height: 24 });
