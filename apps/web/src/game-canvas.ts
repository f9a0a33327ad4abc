import type { ClientView } from "./frames.js";
import { drawScene, idleScene, SceneBuilder } from "./render.js";

// The game's canvas: a game's frames, or the idle scene between games.

export class GameCanvas {
  private readonly ctx: CanvasRenderingContext2D;
  private readonly scenes = new SceneBuilder();
  /** The view the canvas shows, while in a game. */
  private drawnView: ClientView | undefined;

  /** Throws when the browser has no 2D canvas. */
  constructor(canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext("2d", { alpha: false });
    if (!ctx) throw new Error("this browser has no 2D canvas");
    this.ctx = ctx;
  }

  /** A new game begins: forget the last one's scene. */
  reset(): void {
    this.scenes.reset();
  }

  /**
   * Draws a game's view, or the idle scene when there is none. In a game the picture changes only
   * when a tick frame arrives (every 33 ms), so the canvas is redrawn only then: half the
   * main-thread drawing of a redraw per display frame, and the page has more room to take the
   * next network message on time. The idle scene animates every frame.
   */
  draw(time: number, view: ClientView | undefined): void {
    if (view) {
      if (view === this.drawnView) return;
      this.drawnView = view;
      drawScene(this.ctx, this.scenes.fromView(view));
    } else {
      this.drawnView = undefined;
      drawScene(this.ctx, idleScene(time));
    }
  }
}
