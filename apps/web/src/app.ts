import { createApi } from "./api.js";
import { SoundPlayer } from "./audio.js";
import { createAutomation, emit, type FlapLabAutomation } from "./automation.js";
import type { AppConfig } from "./config.js";
import { GameCanvas } from "./game-canvas.js";
import { GameLifecycle, linkFromPage } from "./game-lifecycle.js";
import { GameOverScreen } from "./game-over.js";
import { Login } from "./login.js";
import { pageElements, Screens } from "./page.js";
import { PALETTE } from "./palette.js";
import { Scoreboard } from "./scoreboard.js";
import { SessionStore } from "./session-store.js";
import { seedFromUrl } from "./url-seed.js";

function isSpace(e: KeyboardEvent): boolean {
  return e.code === "Space" || e.key === " ";
}

function isTextField(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement;
}

/**
 * The whole page: puts the screens, the login, the game, the scoreboard, the canvas and the
 * automation API (`window.flaplab`) together, and routes the player's input to them.
 */
export class App {
  private readonly sessions = new SessionStore(window.localStorage);
  private readonly sound = new SoundPlayer();
  private readonly el = pageElements();
  /** A fixed world seed from the page URL (`?seed=<int64>`), for replaying recorded games. */
  private readonly seed: bigint | undefined = seedFromUrl(location.search);
  /** The stream link of every game (`?link=`); an unknown value is shown and no game starts. */
  private readonly link = linkFromPage(location.search);
  private readonly canvas: GameCanvas;
  private readonly screens: Screens;
  private readonly login: Login;
  private readonly scoreboard: Scoreboard;
  private readonly game: GameLifecycle;
  readonly automation: FlapLabAutomation;

  constructor(private readonly config: AppConfig) {
    const api = createApi(config, this.sessions);
    this.canvas = new GameCanvas(this.el.canvas);
    this.screens = new Screens(
      this.el,
      () => this.sessions.get()?.username,
      (state) => emit(this.automation, "flaplab:state", { state }),
    );
    this.login = new Login(this.el, api, this.sessions, this.screens, () => void this.scoreboard.refresh());
    this.scoreboard = new Scoreboard(this.el, api, this.sessions, () => this.login.expired());
    this.game = new GameLifecycle({
      config,
      api,
      sessions: this.sessions,
      sound: this.sound,
      screens: this.screens,
      gameOver: new GameOverScreen(this.el),
      seed: this.seed,
      link: this.link,
      lastAuth: () => this.login.lastAuth,
      onNewGame: () => this.canvas.reset(),
      onExpired: () => this.login.expired(),
      onGameOver: (lastGame, summary) => {
        emit(this.automation, "flaplab:gameover", { lastGame, summary });
        void this.scoreboard.refresh();
      },
    });
    this.automation = createAutomation({
      state: () => this.screens.state,
      rows: () => this.game.rows,
      csv: () => this.game.csv(),
      report: () => this.game.report,
      lastGame: () => this.game.lastGame,
      trace: () => this.game.trace,
      token: () => this.sessions.get()?.token ?? null,
      tick: () => this.game.tick,
      pressAtTicks: (ticks) => this.game.pressAtTicks(ticks),
    });
    window.flaplab = this.automation;
    window.flaplabPalette = { sky: PALETTE.sky, pipe: PALETTE.pipeBody, bird: PALETTE.birdBody, scoreText: PALETTE.scoreText };
  }

  start(): void {
    const linkLabel = "link" in this.link ? ` · link: ${this.link.link}` : "";
    this.el.topology.textContent = this.config.topology ? `topology: ${this.config.topology}${linkLabel}` : linkLabel.slice(3);
    if ("error" in this.link) this.screens.showBanner(this.link.error);
    this.bindEvents();
    if (this.sessions.get()) {
      this.screens.show("ready");
      void this.scoreboard.refresh();
    } else {
      this.screens.show("login");
    }
    const frame = (time: number) => {
      const state = this.screens.state;
      this.canvas.draw(time, state === "playing" || state === "over" ? this.game.view : undefined);
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }

  private bindEvents(): void {
    const unlock = () => this.sound.unlock();
    window.addEventListener("keydown", unlock, { capture: true });
    window.addEventListener("pointerdown", unlock, { capture: true });

    window.addEventListener("keydown", (e) => this.onKeyDown(e));
    window.addEventListener("keyup", (e) => {
      // Keeps a focused button from being clicked by the Space that also flaps.
      if (isSpace(e) && !isTextField(e.target) && this.screens.state !== "login") e.preventDefault();
    });
    this.el.canvas.addEventListener("pointerdown", () => {
      if (this.screens.state === "playing") this.game.flap();
    });

    this.el.authForm.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.login.authenticate("login");
    });
    this.el.register.addEventListener("click", () => void this.login.authenticate("register"));
    this.el.logout.addEventListener("click", () => this.logout());
    this.el.playAgain.addEventListener("click", () => void this.game.start());
    window.addEventListener("pagehide", () => this.game.abort("page closed"));
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (!isSpace(e) || isTextField(e.target)) return;
    if (this.screens.state === "login") return;
    e.preventDefault();
    if (e.repeat) return;
    if (this.screens.state === "playing") this.game.flap();
    else if (this.screens.state === "ready" || this.screens.state === "over") void this.game.start();
  }

  private logout(): void {
    this.game.stop("logged out");
    this.sessions.clear();
    this.scoreboard.clear();
    this.screens.show("login");
  }
}
