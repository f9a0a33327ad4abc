import type { ClientPipe, ClientView } from "./frames.js";
import { BIRD, BIRD_X, GROUND_HEIGHT, PIPE_CAP_HEIGHT, PIPE_CAP_OVERHANG, PIPE_WIDTH, VIEWPORT } from "./geometry.js";
import { PALETTE } from "./palette.js";

/** Everything one canvas frame shows. */
export interface Scene {
  /** Top of the bird box, px. */
  readonly birdY: number;
  /** Bird rotation, degrees (positive = nose down). */
  readonly tiltDeg: number;
  /** Wing position: 0 up, 1 middle, 2 down. */
  readonly wing: 0 | 1 | 2;
  readonly pipes: readonly ClientPipe[];
  readonly pipeWidth: number;
  /** Score digits at the top, or null to hide them. */
  readonly score: number | null;
  /** Drives the cloud drift, px. */
  readonly scroll: number;
}

/** The start position of the bird (the engine's START_BIRD_Y). */
export const START_BIRD_Y = 200;

export function idleScene(timeMs: number): Scene {
  return {
    birdY: START_BIRD_Y + Math.sin(timeMs / 250) * 6,
    tiltDeg: 0,
    wing: (Math.floor(timeMs / 120) % 3) as 0 | 1 | 2,
    pipes: [],
    pipeWidth: PIPE_WIDTH,
    score: null,
    scroll: timeMs / 40,
  };
}

/** Keeps what drawing needs across frames (the previous bird y, for the tilt). */
export class SceneBuilder {
  private prevTick = -1;
  private prevY: number | undefined;
  private lastY: number | undefined;

  fromView(view: ClientView): Scene {
    if (view.tick !== this.prevTick) {
      this.prevY = this.lastY;
      this.lastY = view.birdY;
      this.prevTick = view.tick;
    }
    const dy = this.prevY === undefined ? 0 : view.birdY - this.prevY;
    // As FlappyGo: wing up when rising, down when falling; tilt 2° per px, within ±20°.
    const wing: 0 | 1 | 2 = dy < -2 ? 0 : dy > 2 ? 2 : 1;
    return {
      birdY: view.birdY,
      tiltDeg: Math.max(-20, Math.min(20, 2 * dy)),
      wing,
      pipes: view.pipes,
      pipeWidth: view.pipeWidth || PIPE_WIDTH,
      score: view.score,
      scroll: view.tick * 0.6,
    };
  }

  reset(): void {
    this.prevTick = -1;
    this.prevY = undefined;
    this.lastY = undefined;
  }
}

export function drawScene(ctx: CanvasRenderingContext2D, scene: Scene): void {
  const { width, height } = VIEWPORT;
  ctx.save();
  ctx.fillStyle = PALETTE.sky;
  ctx.fillRect(0, 0, width, height);
  drawClouds(ctx, scene.scroll);
  drawGround(ctx, scene.scroll);
  for (const pipe of scene.pipes) drawPipe(ctx, pipe, scene.pipeWidth);
  drawBird(ctx, BIRD_X, scene.birdY, scene.tiltDeg, scene.wing);
  if (scene.score !== null) drawScore(ctx, scene.score);
  ctx.restore();
}

function drawClouds(ctx: CanvasRenderingContext2D, scroll: number): void {
  const span = VIEWPORT.width + 160;
  const clouds = [
    { x: 40, y: 90, s: 1 },
    { x: 260, y: 150, s: 0.8 },
    { x: 420, y: 60, s: 1.2 },
  ];
  ctx.fillStyle = PALETTE.cloud;
  for (const c of clouds) {
    const x = ((((c.x - scroll * 0.3) % span) + span) % span) - 80;
    const puffs: [number, number, number, number][] = [
      [x, c.y, 34, 14],
      [x + 22 * c.s, c.y - 10 * c.s, 22, 14],
      [x - 20 * c.s, c.y - 4 * c.s, 18, 11],
    ];
    for (const [px, py, rx, ry] of puffs) {
      ctx.beginPath();
      ctx.ellipse(px, py, rx * c.s, ry * c.s, 0, 0, Math.PI * 2);
      ctx.fill();
    }
  }
}

function drawGround(ctx: CanvasRenderingContext2D, scroll: number): void {
  const { width, height } = VIEWPORT;
  const top = height - GROUND_HEIGHT;
  ctx.fillStyle = PALETTE.ground;
  ctx.fillRect(0, top, width, GROUND_HEIGHT);
  ctx.fillStyle = PALETTE.groundEdge;
  ctx.fillRect(0, top, width, 4);
  // Diagonal stripes that move with the pipes.
  ctx.fillStyle = PALETTE.groundShade;
  const offset = scroll % 24;
  for (let x = -24 - offset; x < width + 24; x += 24) {
    ctx.beginPath();
    ctx.moveTo(x, top + 4);
    ctx.lineTo(x + 10, top + 4);
    ctx.lineTo(x + 4, height);
    ctx.lineTo(x - 6, height);
    ctx.closePath();
    ctx.fill();
  }
}

/** One pipe pair: a solid body with a highlight and a dark edge, and a cap at each mouth. */
function drawPipe(ctx: CanvasRenderingContext2D, pipe: ClientPipe, pipeWidth: number): void {
  const { height } = VIEWPORT;
  const x = pipe.x;
  const gapBottom = pipe.gapStart + pipe.gapHeight;
  const segments: [number, number, "top" | "bottom"][] = [
    [0, pipe.gapStart, "top"],
    [gapBottom, height, "bottom"],
  ];
  for (const [y0, y1, side] of segments) {
    if (y1 <= y0) continue;
    pipeBody(ctx, x, y0, pipeWidth, y1 - y0);
    const capY = side === "top" ? Math.max(y0, y1 - PIPE_CAP_HEIGHT) : y0;
    const capH = Math.min(PIPE_CAP_HEIGHT, y1 - y0);
    pipeCap(ctx, x - PIPE_CAP_OVERHANG, capY, pipeWidth + 2 * PIPE_CAP_OVERHANG, capH);
  }
}

function pipeBody(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number): void {
  ctx.fillStyle = PALETTE.pipeBody;
  ctx.fillRect(x, y, w, h);
  // Highlight stripe on the left, fading into the body colour.
  const hl = ctx.createLinearGradient(x + 4, 0, x + 4 + w * 0.28, 0);
  hl.addColorStop(0, PALETTE.pipeHighlight);
  hl.addColorStop(1, PALETTE.pipeBody);
  ctx.fillStyle = hl;
  ctx.fillRect(x + 4, y, w * 0.28, h);
  // Shaded right side.
  const sh = ctx.createLinearGradient(x + w * 0.72, 0, x + w - 2, 0);
  sh.addColorStop(0, PALETTE.pipeBody);
  sh.addColorStop(1, PALETTE.pipeEdge);
  ctx.fillStyle = sh;
  ctx.fillRect(x + w * 0.72, y, w * 0.28 - 2, h);
  // Dark 2 px edge.
  ctx.strokeStyle = PALETTE.pipeEdge;
  ctx.lineWidth = 2;
  ctx.strokeRect(x + 1, y - 1, w - 2, h + 2);
}

function pipeCap(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number): void {
  const g = ctx.createLinearGradient(x, 0, x + w, 0);
  g.addColorStop(0, PALETTE.pipeCap);
  g.addColorStop(0.15, PALETTE.pipeHighlight);
  g.addColorStop(0.5, PALETTE.pipeCap);
  g.addColorStop(1, PALETTE.pipeEdge);
  ctx.fillStyle = g;
  ctx.fillRect(x, y, w, h);
  ctx.strokeStyle = PALETTE.pipeEdge;
  ctx.lineWidth = 2;
  ctx.strokeRect(x + 1, y + 1, w - 2, h - 2);
}

/** One ellipse of the bird at (x, y), filled, and outlined at `outlineWidth` when one is given. */
function bodyPart(
  ctx: CanvasRenderingContext2D,
  x: number,
  y: number,
  radiusX: number,
  radiusY: number,
  rotation: number,
  fill: string,
  outlineWidth?: number,
): void {
  ctx.beginPath();
  ctx.ellipse(x, y, radiusX, radiusY, rotation, 0, Math.PI * 2);
  ctx.fillStyle = fill;
  ctx.fill();
  if (outlineWidth === undefined) return;
  ctx.lineWidth = outlineWidth;
  ctx.strokeStyle = PALETTE.birdOutline;
  ctx.stroke();
}

/** The bird, drawn with paths inside its 34×24 box: body, belly, wing, eye, beak. */
export function drawBird(ctx: CanvasRenderingContext2D, x: number, y: number, tiltDeg: number, wing: 0 | 1 | 2): void {
  const w = BIRD.width;
  const h = BIRD.height;
  ctx.save();
  ctx.translate(x + w / 2, y + h / 2);
  ctx.rotate((tiltDeg * Math.PI) / 180);
  bodyPart(ctx, -1, 0, w / 2 - 2, h / 2 - 1, 0, PALETTE.birdBody, 1.2);
  bodyPart(ctx, 2, 7, 6, 2.5, 0, PALETTE.birdBelly);
  // Wing: up, middle or down.
  const wingY = [-4, 1, 4][wing]!;
  bodyPart(ctx, -9, wingY, 5.5, 3.5, wing === 0 ? -0.5 : wing === 2 ? 0.5 : 0, PALETTE.birdWing, 1);
  // Eye: white, outlined, and the pupil.
  bodyPart(ctx, 8, -4, 4.5, 4.5, 0, PALETTE.birdEyeWhite, 1);
  bodyPart(ctx, 9.5, -4, 2, 2, 0, PALETTE.birdPupil);
  // Beak.
  ctx.beginPath();
  ctx.moveTo(10, 0);
  ctx.lineTo(18, 2);
  ctx.lineTo(10, 6);
  ctx.closePath();
  ctx.fillStyle = PALETTE.birdBeak;
  ctx.fill();
  ctx.stroke();
  ctx.restore();
}

/** Big digits, top centre: white with a dark outline (outline first, so the digits stay solid). */
export function drawScore(ctx: CanvasRenderingContext2D, score: number): void {
  const text = String(score);
  ctx.save();
  ctx.font = "bold 56px system-ui, 'Segoe UI', Arial, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  ctx.lineJoin = "round";
  ctx.lineWidth = 8;
  ctx.strokeStyle = PALETTE.scoreOutline;
  ctx.strokeText(text, VIEWPORT.width / 2, 28);
  ctx.fillStyle = PALETTE.scoreText;
  ctx.fillText(text, VIEWPORT.width / 2, 28);
  ctx.restore();
}
