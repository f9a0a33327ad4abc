import type { StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { type Api, errorText, isUnauthenticated } from "./api.js";
import type { AppState, GameReport, LastGame } from "./automation.js";
import type { AppConfig } from "./config.js";
import type { ClientView } from "./frames.js";
import { engineSummaryView, type GameOverScreen } from "./game-over.js";
import { type GameResult, GameRun } from "./game-run.js";
import { BIRD, VIEWPORT } from "./geometry.js";
import { LatencyLog, type LatencyRow } from "./latency-log.js";
import type { AuthTiming } from "./login.js";
import type { Screens } from "./page.js";
import type { SessionStore } from "./session-store.js";
import { linkFromUrl, type StreamLink } from "./stream-link.js";
import { StreamOpenError } from "@flaplab/game-client";

// A game from start to game over: StartGame, the game's streams, the presses automation asked
// for, and what is kept of the last game.

/** The stream link of every game (`?link=`), or why the page's value is not one. */
export type LinkChoice = { readonly link: StreamLink } | { readonly error: string };

/** The stream link a page URL's query asks for (WebTransport unless it says otherwise). */
export function linkFromPage(search: string): LinkChoice {
  try {
    return { link: linkFromUrl(search) ?? "webtransport" };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

export interface GameLifecycleDeps {
  readonly config: AppConfig;
  readonly api: Api;
  readonly sessions: SessionStore;
  readonly sound: { play(audio: Uint8Array): Promise<void> };
  readonly screens: Screens;
  readonly gameOver: GameOverScreen;
  /** A fixed world seed for every game, or undefined for a new world each game. */
  readonly seed: bigint | undefined;
  readonly link: LinkChoice;
  /** The last Register/Login round trip, added to every game's log. */
  lastAuth(): AuthTiming | undefined;
  /** A new game begins: the picture of the last one is forgotten. */
  onNewGame(): void;
  /** The initiator refused the session. */
  onExpired(): void;
  /** A game ended and its game-over screen shows. */
  onGameOver(lastGame: LastGame, report: GameReport): void;
}

export class GameLifecycle {
  private starting = false;
  private run: GameRun | undefined;
  private latest: ClientView | undefined;
  private log = new LatencyLog();
  /** Ticks before which the page presses Space itself (`flaplab.pressAtTicks`), and those done this game. */
  private tickPresses: ReadonlySet<number> | undefined;
  private pressedTicks = new Set<number>();
  private lastReport: GameReport | null = null;
  private lastTrace: string | null = null;
  private last: LastGame | null = null;

  constructor(private readonly deps: GameLifecycleDeps) {}

  /** The current game's newest frame (kept after game over until the next game starts). */
  get view(): ClientView | undefined {
    return this.latest;
  }
  /** Rows of the current (or last) game's latency log. */
  get rows(): readonly LatencyRow[] {
    return this.log.rows;
  }
  csv(): string {
    return this.log.csv();
  }
  get report(): GameReport | null {
    return this.lastReport;
  }
  get lastGame(): LastGame | null {
    return this.last;
  }
  get trace(): string | null {
    return this.lastTrace;
  }
  /** The tick of the running game's latest frame, or null. */
  get tick(): number | null {
    return this.run ? (this.latest?.tick ?? null) : null;
  }
  /** From the next frame on, presses Space before each of these ticks (none: off). */
  pressAtTicks(ticks: readonly number[]): void {
    this.tickPresses = ticks.length > 0 ? new Set(ticks) : undefined;
  }

  flap(): void {
    this.run?.flap();
  }

  /** Ends the running game's streams. */
  abort(reason: string): void {
    this.run?.abort(reason);
  }

  /** Ends the running game and forgets it: its end is not reported. */
  stop(reason: string): void {
    this.run?.abort(reason);
    this.run = undefined;
  }

  /** Starts a game, unless one is starting or running or no one is logged in. */
  async start(): Promise<void> {
    const { deps } = this;
    const { screens } = deps;
    if (this.starting || screens.state === "playing" || screens.state === "login") return;
    if (!deps.sessions.get()) return deps.onExpired();
    if ("error" in deps.link) return screens.showBanner(deps.link.error);
    this.starting = true;
    (document.activeElement as HTMLElement | null)?.blur?.();
    screens.hideBanner();
    screens.setStartStatus("Starting…");
    if (screens.state === "over") screens.show("ready");
    screens.setStartStatus("Starting…");
    const log = new LatencyLog();
    this.log = log;
    const auth = deps.lastAuth();
    if (auth) log.rtt("auth", auth.start, auth.ms, auth.note);
    this.latest = undefined;
    this.pressedTicks = new Set();
    deps.onNewGame();
    try {
      const t = log.time();
      const res = await deps.api.game.startGame({
        viewport: { width: VIEWPORT.width, height: VIEWPORT.height },
        bird: { width: BIRD.width, height: BIRD.height },
        seed: deps.seed,
      });
      log.rtt("start", t, log.time() - t, res.gameId);
      const run = this.newRun(res, log);
      await run.open();
      // The player may have logged out while the streams opened (a getter: not narrowed by the checks above).
      if (!deps.sessions.get() || (screens.state as AppState) === "login") {
        run.abort("logged out");
        return;
      }
      this.run = run;
      screens.show("playing");
      void run.finished.then((result) => this.finished(run, result));
    } catch (err) {
      screens.setStartStatus("");
      if (isUnauthenticated(err)) return deps.onExpired();
      this.startFailed(err, log);
    } finally {
      this.starting = false;
      if (screens.state === "ready") screens.setStartStatus("");
    }
  }

  /** The game StartGame answered, its events routed to this page. */
  private newRun(start: StartGameResponse, log: LatencyLog): GameRun {
    const { deps } = this;
    const run: GameRun = new GameRun({
      start,
      allowNative: deps.config.http3,
      link: "link" in deps.link ? deps.link.link : "webtransport",
      log,
      sound: deps.sound,
      onView: (view) => {
        if (this.run !== run) return;
        this.latest = view;
        // Automation on the tick clock: the press meant before tick T+1, once.
        const next = view.tick + 1;
        if (this.tickPresses?.has(next) && !this.pressedTicks.has(next) && !view.gameOver) {
          this.pressedTicks.add(next);
          run.flap();
        }
      },
      onNotice: (text) => deps.screens.showBanner(text),
      // Its engine drained or died: the initiator places it on a live engine, which continues it.
      resume: (gameId) => deps.api.game.resumeGame(gameId),
      onStatus: (text) => {
        if (this.run !== run) return;
        if (text === undefined) deps.screens.hideBanner();
        else deps.screens.showBanner(text);
      },
    });
    return run;
  }

  private startFailed(err: unknown, log: LatencyLog): void {
    const { screens } = this.deps;
    if (err instanceof StreamOpenError) {
      log.error(err.message);
      const text = `${err.message.replace(/\.+$/, "")}.`;
      // A plain ws:// link has no certificate to accept.
      if (err.certificateUrl === undefined) screens.showBanner(text);
      else
        screens.showBanner(text, {
          href: err.certificateUrl,
          label: `Open ${err.certificateUrl} and accept its certificate`,
          after:
            " (the stream server uses a self-signed certificate), or start Chrome with --ignore-certificate-errors; then press Space again.",
        });
    } else {
      log.error(`start failed: ${errorText(err)}`);
      screens.showBanner(`could not start a game: ${errorText(err)}`);
    }
  }

  private finished(run: GameRun, result: GameResult): void {
    if (this.run !== run) return;
    this.run = undefined;
    const engine = result.engineSummary ? engineSummaryView(result.engineSummary) : null;
    const report: GameReport = { ...this.log.summary(), engine };
    this.lastReport = report;
    this.lastTrace = result.trace;
    const lastGame: LastGame = {
      gameId: result.gameId,
      seed: result.seed.toString(),
      score: result.score,
      ticks: result.ticks,
      recorded: engine?.recorded ?? false,
      error: result.error ?? null,
      reconnections: result.reconnections,
      resentInputs: result.resentInputs,
    };
    this.last = lastGame;
    if (result.error) this.deps.screens.showBanner(result.error);
    this.deps.gameOver.show(result, report, this.log.rows);
    this.deps.screens.show("over");
    this.deps.onGameOver(lastGame, report);
  }
}
