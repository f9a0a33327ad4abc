import { type Api, errorText, toStoredSession } from "./api.js";
import type { PageElements, Screens } from "./page.js";
import type { SessionStore } from "./session-store.js";

// The login screen: register or log in, and back to it when the session has expired.

/** A Register or Login round trip: when it started and how long it took. */
export interface AuthTiming {
  readonly start: number;
  readonly ms: number;
  readonly note: string;
}

export class Login {
  private last: AuthTiming | undefined;

  constructor(
    private readonly el: PageElements,
    private readonly api: Api,
    private readonly sessions: SessionStore,
    private readonly screens: Screens,
    /** Called once a player has logged in or registered. */
    private readonly onLoggedIn: () => void,
  ) {}

  /** The last Register/Login round trip, added to every game's log. */
  get lastAuth(): AuthTiming | undefined {
    return this.last;
  }

  /** Registers or logs in with the form's name and password. */
  async authenticate(kind: "login" | "register"): Promise<void> {
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
      const session = kind === "login" ? await this.api.game.login(username, password) : await this.api.game.register(username, password);
      this.last = { start, ms: performance.now() - start, note: kind };
      this.sessions.set(toStoredSession(session));
      this.el.password.value = "";
      this.screens.hideBanner();
      this.screens.show("ready");
      this.onLoggedIn();
    } catch (err) {
      this.el.authError.textContent = errorText(err);
    } finally {
      this.el.login.disabled = this.el.register.disabled = false;
    }
  }

  /** A call was refused for an expired session: forget it and ask for a login. */
  expired(): void {
    this.sessions.clear();
    this.el.authError.textContent = "your session has expired: please log in again";
    this.screens.show("login");
  }
}
