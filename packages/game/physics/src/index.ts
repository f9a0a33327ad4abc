export {
  TICK_MS,
  PIPE_WIDTH,
  GRAVITY,
  FLAP_VELOCITY,
  START_PIPE_SPEED,
  PIPE_SPEED_STEP,
  MAX_PIPE_SPEED,
  BIRD_X,
  START_BIRD_Y,
  DEFAULT_VIEWPORT,
  DEFAULT_BIRD,
} from "./constants.js";
export type { Viewport, BirdBox } from "./constants.js";
export {
  pipesInView,
  validateCourse,
  snapshotCourse,
  createGame,
  cloneGame,
  applyInput,
  applyInputInPlace,
  tickInPlace,
  stepInPlace,
  step,
  viewOf,
} from "./game.js";
export type {
  PipeGap,
  Course,
  Phase,
  GameState,
  StepEvents,
  StepResult,
  PipeInView,
  FrameView,
  InputEffect,
} from "./game.js";
