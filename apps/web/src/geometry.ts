/** FlappyGo's geometry: the viewport, the bird box and the pipes, in px. */
export const VIEWPORT = Object.freeze({ width: 480, height: 640 });
export const BIRD = Object.freeze({ width: 34, height: 24 });
/** Left edge of the bird box. */
export const BIRD_X = 50;
/** Pipe width when the stream does not say otherwise. */
export const PIPE_WIDTH = 72;
/** Height of the cap at the mouth of each pipe. */
export const PIPE_CAP_HEIGHT = 22;
/** How far the cap reaches past the pipe on each side. */
export const PIPE_CAP_OVERHANG = 4;
/** The ground band drawn at the bottom (decoration only: the physics has no ground). */
export const GROUND_HEIGHT = 18;
