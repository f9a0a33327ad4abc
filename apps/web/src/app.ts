import { PALETTE } from "./palette.js";
import { seedFromUrl } from "./url-seed.js";
import { linkFromUrl, type StreamLink } from "./stream-link.js";
import type { GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import type { Run } from "@flaplab/contracts/score/v1/score_pb";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createApi, errorText, isUnauthenticated, toStoredSession, type Api } from "./api.js";
import { SoundPlayer } from "./audio.js";
import {
  createAutomation,
  emit,
  type AppState,
  type EngineSummaryView,
  type FlapLabAutomation,
  type GameReport,
  type LastGame,
} from "./automation.js";
import type { AppConfig } from "./config.js";
import type { ClientView } from "./frames.js";
import { GameRun, type GameResult } from "./game-run.js";
import { BIRD, VIEWPORT } from "./geometry.js";
import { LatencyLog, rowsToCsv, type LatencyRow } from "./latency-log.js";
import { drawScene, idleScene, SceneBuilder } from "./render.js";
import { SessionStore } from "./session-store.js";
import { StreamOpenError } from "./webtransport.js";

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page element #${id} is missing`);
  return el as T;
}

function isSpace(e: KeyboardEvent): boolean {
  return e.code === "Space" || e.key === " ";
}

function isTextField(target: EventTarget | null): boolean {
  return target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement;
}

export function engineSummaryView(s: GameSummary): EngineSummaryView {
  return {
    score: s.score,
    ticks: s.ticks,
    recorded: s.recorded,
    recordError: s.recordError,
    recordPending: s.recordPending,
    framesSent: s.framesSent,
    frameBytes: Number(s.frameBytes),
    framesUnder1kb: s.framesUnder1kb,
    acksSent: s.acksSent,
    ackBytes: Number(s.ackBytes),
    tickLatenessP50Us: s.tickLatenessP50Us,
    tickLatenessMaxUs: s.tickLatenessMaxUs,
    ticksSkipped: s.ticksSkipped,
  };
}

/** The whole page: screens, game, scoreboard, automation API. */
export class App {
  private readonly sessions = new SessionStore(window.localStorage);
  private readonly api: Api;
  private readonly sound = new SoundPlayer();
  private readonly scenes = new SceneBuilder();
  private readonly ctx: CanvasRenderingContext2D;
  readonly automation: FlapLabAutomation;

  private state: AppState = "login";
  private starting = false;
  private run: GameRun | undefined;
  private view: ClientView | undefined;
  /** The view the canvas shows, while in a game. */
  private drawnView: ClientView | undefined;
  private log = new LatencyLog();
  /** The last Register/Login round trip, added to every game's log. */
  private lastAuth: { start: number; ms: number; note: string } | undefined;
  private lastGame: LastGame | null = null;
  /** Ticks before which the page presses Space itself (`flaplab.pressAtTicks`), and those done this game. */
  private tickPresses: ReadonlySet<number> | undefined;
  private pressedTicks = new Set<number>();
  private lastReport: GameReport | null = null;
  private lastTrace: string | null = null;
  private objectUrls: string[] = [];

  private readonly el = {
    topology: byId("topology"),
    userName: byId("user-name"),
    logout: byId<HTMLButtonElement>("logout"),
    banner: byId("banner"),
    canvas: byId<HTMLCanvasElement>("game-canvas"),
    loginScreen: byId("login-screen"),
    authForm: byId<HTMLFormElement>("auth-form"),
    username: byId<HTMLInputElement>("username"),
    password: byId<HTMLInputElement>("password"),
    login: byId<HTMLButtonElement>("login"),
    register: byId<HTMLButtonElement>("register"),
    authError: byId("auth-error"),
    startScreen: byId("start-screen"),
    startStatus: byId("start-status"),
    overScreen: byId("over-screen"),
    finalScore: byId("final-score"),
    recordStatus: byId("record-status"),
    summary: byId("game-summary"),
    playAgain: byId<HTMLButtonElement>("play-again"),
    downloadCsv: byId<HTMLAnchorElement>("download-csv"),
    saveTrace: byId<HTMLAnchorElement>("save-trace"),
    scoreboard: byId("scoreboard"),
    ownRuns: byId("own-runs"),
    leaderboard: byId("leaderboard"),
    scoreboardStatus: byId("scoreboard-status"),
  };

  /** A fixed world seed from the page URL (`?seed=<int64>`), for replaying recorded games. */
  private readonly seed: bigint | undefined = seedFromUrl(location.search);
  /** The stream link of every game (`?link=`); an unknown value is shown and no game starts. */
  private readonly link: { readonly link: StreamLink } | { readonly error: string } = (() => {
    try {
      return { link: linkFromUrl(location.search) ?? "webtransport" };
    } catch (err) {
      return { error: (err as Error).message };
    }
  })();

  constructor(private readonly config: AppConfig) {
    this.api = createApi(config, this.sessions);
    const ctx = this.el.canvas.getContext("2d", { alpha: false });
    if (!ctx) throw new Error("this browser has no 2D canvas");
    this.ctx = ctx;
    this.automation = createAutomation({
      state: () => this.state,
      rows: () => this.log.rows,
      csv: () => this.log.csv(),
      report: () => this.lastReport,
      lastGame: () => this.lastGame,
      trace: () => this.lastTrace,
      token: () => this.sessions.get()?.token ?? null,
      tick: () => (this.run ? (this.view?.tick ?? null) : null),
      pressAtTicks: (ticks) => {
        this.tickPresses = ticks.length > 0 ? new Set(ticks) : undefined;
      },
    });
    window.flaplab = this.automation;
    window.flaplabPalette = { sky: PALETTE.sky, pipe: PALETTE.pipeBody, bird: PALETTE.birdBody, scoreText: PALETTE.scoreText };
  }

  start(): void {
    const linkLabel = "link" in this.link ? ` · link: ${this.link.link}` : "";
    this.el.topology.textContent = this.config.topology ? `topology: ${this.config.topology}${linkLabel}` : linkLabel.slice(3);
    if ("error" in this.link) this.showBanner(this.link.error);
    this.bindEvents();
    const session = this.sessions.get();
    if (session) {
      this.setState("ready");
      void this.refreshScores();
    } else {
      this.setState("login");
    }
    const frame = (time: number) => {
      this.draw(time);
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }

  // --- screens -------------------------------------------------------------------------------

  private setState(state: AppState): void {
    const session = this.sessions.get();
    this.state = state;
    this.el.loginScreen.hidden = state !== "login";
    this.el.startScreen.hidden = state !== "ready";
    this.el.overScreen.hidden = state !== "over";
    this.el.scoreboard.hidden = state === "login";
    this.el.logout.hidden = state === "login";
    this.el.userName.textContent = state !== "login" && session ? session.username : "";
    if (state === "login") this.el.username.focus();
    if (state === "ready") this.el.startStatus.textContent = "";
    emit(this.automation, "flaplab:state", { state });
  }

  private showBanner(text: string, link?: { href: string; label: string; after?: string }): void {
    const b = this.el.banner;
    b.replaceChildren(document.createTextNode(text));
    if (link) {
      b.append(document.createElement("br"));
      const a = document.createElement("a");
      a.href = link.href;
      a.target = "_blank";
      a.rel = "noopener";
      a.textContent = link.label;
      b.append(a);
      if (link.after) b.append(document.createTextNode(link.after));
    }
    b.hidden = false;
  }

  private hideBanner(): void {
    this.el.banner.hidden = true;
    this.el.banner.replaceChildren();
  }

  // --- input ---------------------------------------------------------------------------------

  private bindEvents(): void {
    const unlock = () => this.sound.unlock();
    window.addEventListener("keydown", unlock, { capture: true });
    window.addEventListener("pointerdown", unlock, { capture: true });

    window.addEventListener("keydown", (e) => this.onKeyDown(e));
    window.addEventListener("keyup", (e) => {
      // Keeps a focused button from being clicked by the Space that also flaps.
      if (isSpace(e) && !isTextField(e.target) && this.state !== "login") e.preventDefault();
    });
    this.el.canvas.addEventListener("pointerdown", () => {
      if (this.state === "playing") this.run?.flap();
    });

    this.el.authForm.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.authenticate("login");
    });
    this.el.register.addEventListener("click", () => void this.authenticate("register"));
    this.el.logout.addEventListener("click", () => this.logout());
    this.el.playAgain.addEventListener("click", () => void this.startGame());
    window.addEventListener("pagehide", () => this.run?.abort("page closed"));
  }

  private onKeyDown(e: KeyboardEvent): void {
    if (!isSpace(e) || isTextField(e.target)) return;
    if (this.state === "login") return;
    e.preventDefault();
    if (e.repeat) return;
    if (this.state === "playing") this.run?.flap();
    else if (this.state === "ready" || this.state === "over") void this.startGame();
  }

  // --- auth ----------------------------------------------------------------------------------

  private async authenticate(kind: "login" | "register"): Promise<void> {
    const username = this.el.username.value.trim();
    const password = this.el.password.value;
    this.el.authError.textContent = "";
    if (username === "" || password === "") {
      this.el.authError.textContent = "enter a username and a password";
      return;
    }
    this.el.login.disabled = this.el.register.disabled = true;
    const start = performance.now();
    try {
      const res =
        kind === "login"
          ? await this.api.auth.login({ username, password })
          : await this.api.auth.register({ username, password });
      this.lastAuth = { start, ms: performance.now() - start, note: kind };
      this.sessions.set(toStoredSession(res.session));
      this.el.password.value = "";
      this.hideBanner();
      this.setState("ready");
      void this.refreshScores();
    } catch (err) {
      this.el.authError.textContent = errorText(err);
    } finally {
      this.el.login.disabled = this.el.register.disabled = false;
    }
  }

  private logout(): void {
    this.run?.abort("logged out");
    this.run = undefined;
    this.sessions.clear();
    this.el.ownRuns.replaceChildren();
    this.el.leaderboard.replaceChildren();
    this.setState("login");
  }

  private sessionExpired(): void {
    this.sessions.clear();
    this.el.authError.textContent = "your session has expired: please log in again";
    this.setState("login");
  }

  // --- game ----------------------------------------------------------------------------------

  private async startGame(): Promise<void> {
    if (this.starting || this.state === "playing" || this.state === "login") return;
    const session = this.sessions.get();
    if (!session) return this.sessionExpired();
    if ("error" in this.link) return this.showBanner(this.link.error);
    this.starting = true;
    (document.activeElement as HTMLElement | null)?.blur?.();
    this.hideBanner();
    this.el.startStatus.textContent = "Starting…";
    if (this.state === "over") this.setState("ready");
    this.el.startStatus.textContent = "Starting…";
    const log = new LatencyLog();
    this.log = log;
    if (this.lastAuth) log.rtt("auth", this.lastAuth.start, this.lastAuth.ms, this.lastAuth.note);
    this.view = undefined;
    this.pressedTicks = new Set();
    this.scenes.reset();
    try {
      const t = log.time();
      const res = await this.api.initiator.startGame({
        viewport: { width: VIEWPORT.width, height: VIEWPORT.height },
        bird: { width: BIRD.width, height: BIRD.height },
        seed: this.seed,
      });
      log.rtt("start", t, log.time() - t, res.gameId);
      const run = new GameRun({
        start: res,
        allowNative: this.config.http3,
        link: "link" in this.link ? this.link.link : "webtransport",
        log,
        sound: this.sound,
        onView: (view) => {
          if (this.run !== run) return;
          this.view = view;
          // Automation on the tick clock: the press meant before tick T+1, once.
          const next = view.tick + 1;
          if (this.tickPresses?.has(next) && !this.pressedTicks.has(next) && !view.gameOver) {
            this.pressedTicks.add(next);
            run.flap();
          }
        },
        onNotice: (text) => this.showBanner(text),
        // Its engine drained or died: the initiator places it on a live engine, which continues it.
        resume: async (gameId) => {
          const { game } = await this.api.initiator.resumeGame({ gameId });
          if (!game) throw new Error("the initiator answered ResumeGame without the game");
          return game;
        },
        onStatus: (text) => {
          if (this.run !== run) return;
          if (text === undefined) this.hideBanner();
          else this.showBanner(text);
        },
      });
      await run.open();
      if (!this.sessions.get() || (this.state as AppState) === "login") {
        run.abort("logged out");
        return;
      }
      this.run = run;
      this.setState("playing");
      void run.finished.then((result) => this.onFinished(run, result));
    } catch (err) {
      this.el.startStatus.textContent = "";
      if (isUnauthenticated(err)) return this.sessionExpired();
      if (err instanceof StreamOpenError) {
        log.error(err.message);
        const text = `${err.message.replace(/\.+$/, "")}.`;
        // A plain ws:// link has no certificate to accept.
        if (err.certificateUrl === undefined) this.showBanner(text);
        else
          this.showBanner(text, {
            href: err.certificateUrl,
            label: `Open ${err.certificateUrl} and accept its certificate`,
            after:
              " (the stream server uses a self-signed certificate), or start Chrome with --ignore-certificate-errors; then press Space again.",
          });
      } else {
        log.error(`start failed: ${errorText(err)}`);
        this.showBanner(`could not start a game: ${errorText(err)}`);
      }
    } finally {
      this.starting = false;
      if (this.state === "ready") this.el.startStatus.textContent = "";
    }
  }

  private onFinished(run: GameRun, result: GameResult): void {
    if (this.run !== run) return;
    this.run = undefined;
    const engine = result.engineSummary ? engineSummaryView(result.engineSummary) : null;
    const report: GameReport = { ...this.log.summary(), engine };
    this.lastReport = report;
    this.lastTrace = result.trace;
    this.lastGame = {
      gameId: result.gameId,
      seed: result.seed.toString(),
      score: result.score,
      ticks: result.ticks,
      recorded: engine?.recorded ?? false,
      error: result.error ?? null,
      reconnections: result.reconnections,
      resentInputs: result.resentInputs,
    };
    if (result.error) this.showBanner(result.error);
    this.showGameOver(result, report);
    this.setState("over");
    emit(this.automation, "flaplab:gameover", { lastGame: this.lastGame, summary: report });
    void this.refreshScores();
  }

  private showGameOver(result: GameResult, report: GameReport): void {
    this.el.finalScore.textContent = String(result.score);
    const e = report.engine;
    this.el.recordStatus.textContent = e
      ? e.recorded
        ? "Run recorded."
        : e.recordPending
          ? "Run saved, will be recorded (the scoreboard is unreachable right now)."
          : `Run not recorded: ${e.recordError || "unknown reason"}`
      : result.error
        ? `Game ended early: ${result.error}`
        : "No summary from the engine.";
    const ms = (v: number | null) => (v === null ? "–" : `${v.toFixed(1)} ms`);
    const rows: [string, string][] = [
      ["Frames received", `${report.framesReceived}${e ? ` (engine sent ${e.framesSent})` : ""}`],
      ["Bytes per frame (mean)", report.frameBytesMean === null ? "–" : `${report.frameBytesMean.toFixed(1)} B`],
      ["Frames < 1 KB", report.framesUnder1kbShare === null ? "–" : `${(report.framesUnder1kbShare * 100).toFixed(1)} %`],
      ["Input acks received", `${report.acksReceived}${e ? ` (engine sent ${e.acksSent})` : ""}`],
      ["Input → effect (median)", `${ms(report.inputToEffectMedianMs)} (${report.inputToEffectCount} inputs)`],
      ["Input → next frame (median)", `${ms(report.inputToNextFrameMedianMs)} (${report.inputToNextFrameCount} inputs)`],
      ["Input → audio (median)", `${ms(report.inputToAudioMedianMs)} (${report.inputToAudioCount} clips)`],
      ["Auth latency", ms(report.authMs)],
      ["Start latency", ms(report.startMs)],
    ];
    if (e) {
      rows.push(
        ["Ticks", String(e.ticks)],
        ["Tick lateness p50 / max", `${e.tickLatenessP50Us} / ${e.tickLatenessMaxUs} µs`],
        ["Ticks skipped", String(e.ticksSkipped)],
        ["Engine frame bytes", String(e.frameBytes)],
      );
    }
    this.el.summary.replaceChildren(
      ...rows.flatMap(([k, v]) => {
        const dt = document.createElement("dt");
        dt.textContent = k;
        const dd = document.createElement("dd");
        dd.textContent = v;
        return [dt, dd];
      }),
    );
    for (const url of this.objectUrls) URL.revokeObjectURL(url);
    const csvUrl = URL.createObjectURL(new Blob([rowsToCsv(this.log.rows)], { type: "text/csv" }));
    const traceUrl = URL.createObjectURL(new Blob([result.trace], { type: "application/json" }));
    this.objectUrls = [csvUrl, traceUrl];
    this.el.downloadCsv.href = csvUrl;
    this.el.downloadCsv.download = "latency_data.csv"; // FlappyGo's file name
    this.el.saveTrace.href = traceUrl;
    this.el.saveTrace.download = `${result.seed.toString()}.json`;
  }

  // --- scoreboard ----------------------------------------------------------------------------

  private async refreshScores(): Promise<void> {
    this.el.scoreboardStatus.textContent = "loading…";
    try {
      const res = await this.api.score.getScores({ limit: 10 });
      const session = this.sessions.get();
      this.renderRuns(this.el.ownRuns, res.ownRuns, (r) => `${r.score} points · ${r.ticks} ticks${when(r)}`, "no runs yet");
      this.renderRuns(
        this.el.leaderboard,
        res.leaderboard,
        (r) => `${r.username} · ${r.score}${session && r.username === session.username ? " (you)" : ""}`,
        "no runs yet",
      );
      this.el.scoreboardStatus.textContent = "";
    } catch (err) {
      if (isUnauthenticated(err)) return this.sessionExpired();
      this.el.scoreboardStatus.textContent = `scores unavailable: ${errorText(err)}`;
    }
  }

  private renderRuns(list: HTMLElement, runs: readonly Run[], text: (r: Run) => string, empty: string): void {
    if (runs.length === 0) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = empty;
      list.replaceChildren(li);
      return;
    }
    list.replaceChildren(
      ...runs.map((r) => {
        const li = document.createElement("li");
        li.textContent = text(r);
        li.dataset["gameId"] = r.gameId;
        li.dataset["score"] = String(r.score);
        return li;
      }),
    );
  }

  // --- drawing -------------------------------------------------------------------------------

  /**
   * In a game the picture changes only when a tick frame arrives (every 33 ms), so the canvas is
   * redrawn only then: half the main-thread drawing of a redraw per display frame, and the page
   * has more room to take the next network message on time. The idle scene animates every frame.
   */
  private draw(time: number): void {
    const view = this.view;
    if ((this.state === "playing" || this.state === "over") && view) {
      if (view === this.drawnView) return;
      this.drawnView = view;
      drawScene(this.ctx, this.scenes.fromView(view));
    } else {
      this.drawnView = undefined;
      drawScene(this.ctx, idleScene(time));
    }
  }
}

function when(r: Run): string {
  if (!r.finishedAt) return "";
  const d = timestampDate(r.finishedAt);
  return ` · ${d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`;
}

export type { LatencyRow };

