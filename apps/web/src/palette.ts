/**
 * Every colour the game canvas uses. Tests read canvas pixels for the main ones (sky, pipe body,
 * bird body, score text), so change them only together with those tests.
 */
export const PALETTE = {
  /** Sky background (FlappyGo's page background). */
  sky: "#70c5ce",
  /** Pipe body (FlappyGo's pipe colour). */
  pipeBody: "#3a9e41",
  /** Lighter stripe of the pipe gradient. */
  pipeHighlight: "#5cc263",
  /** Darker side of the pipe gradient, the pipe outline and the cap edge. */
  pipeEdge: "#1f5e24",
  /** Pipe cap (the wider lip at the gap). */
  pipeCap: "#44ad4b",
  /** Bird body. */
  birdBody: "#f7d51d",
  /** Bird belly and wing highlight. */
  birdBelly: "#fbe98a",
  /** Bird outline. */
  birdOutline: "#5a3a10",
  /** Wing. */
  birdWing: "#f4b400",
  birdEyeWhite: "#ffffff",
  birdPupil: "#1a1a1a",
  birdBeak: "#f06a1d",
  /** Ground band at the bottom. */
  ground: "#ded895",
  groundEdge: "#7ac142",
  groundShade: "#c7bf74",
  /** Clouds. */
  cloud: "#e8f6f7",
  /** Score digits and their outline. */
  scoreText: "#ffffff",
  scoreOutline: "#2b2b2b",
  /** Overlay text (start / game over hints). */
  overlayText: "#ffffff",
  overlayShade: "rgba(0, 0, 0, 0.35)",
} as const;

export type PaletteColour = keyof typeof PALETTE;

/** "#rrggbb" → [r, g, b]. */
export function hexToRgb(hex: string): [number, number, number] {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)];
}
