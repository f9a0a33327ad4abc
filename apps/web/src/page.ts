import type { AppState } from "./automation.js";

// The page's elements and its screens: which screen shows, and the banner above them.

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page element #${id} is missing`);
  return el as T;
}

/** Every element of index.html the client reads or writes; throws when one is missing. */
export function pageElements() {
  return {
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
}
export type PageElements = ReturnType<typeof pageElements>;

/** A link shown under the banner's text, with text after it. */
export interface BannerLink {
  readonly href: string;
  readonly label: string;
  readonly after?: string;
}

/** The page's state: which screen shows (login, start, game over), the header and the banner. */
export class Screens {
  private current: AppState = "login";

  constructor(
    private readonly el: PageElements,
    /** The logged-in player's name, if any. */
    private readonly username: () => string | undefined,
    /** Called after every change of state. */
    private readonly onChange: (state: AppState) => void,
  ) {}

  get state(): AppState {
    return this.current;
  }

  show(state: AppState): void {
    const username = this.username();
    this.current = state;
    this.el.loginScreen.hidden = state !== "login";
    this.el.startScreen.hidden = state !== "ready";
    this.el.overScreen.hidden = state !== "over";
    this.el.scoreboard.hidden = state === "login";
    this.el.logout.hidden = state === "login";
    this.el.userName.textContent = state !== "login" && username !== undefined ? username : "";
    if (state === "login") this.el.username.focus();
    if (state === "ready") this.el.startStatus.textContent = "";
    this.onChange(state);
  }

  /** The line under the start screen's prompt ("Starting…", or nothing). */
  setStartStatus(text: string): void {
    this.el.startStatus.textContent = text;
  }

  showBanner(text: string, link?: BannerLink): void {
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

  hideBanner(): void {
    this.el.banner.hidden = true;
    this.el.banner.replaceChildren();
  }
}
