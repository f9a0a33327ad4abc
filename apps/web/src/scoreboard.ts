import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Run } from "@flaplab/contracts/score/v1/score_pb";
import { type Api, errorText, isUnauthenticated } from "./api.js";
import type { PageElements } from "./page.js";
import type { SessionStore } from "./session-store.js";

// The scoreboard beside the game: the player's own runs and the leaderboard.

export class Scoreboard {
  constructor(
    private readonly el: PageElements,
    private readonly api: Api,
    private readonly sessions: SessionStore,
    /** Called when the score component refuses the session. */
    private readonly onExpired: () => void,
  ) {}

  /** Loads and shows the scores; an error is shown in place of them. */
  async refresh(): Promise<void> {
    this.el.scoreboardStatus.textContent = "loading…";
    try {
      const res = await this.api.score.getScores({ limit: 10 });
      const session = this.sessions.get();
      renderRuns(this.el.ownRuns, res.ownRuns, (r) => `${r.score} points · ${r.ticks} ticks${when(r)}`, "no runs yet");
      renderRuns(
        this.el.leaderboard,
        res.leaderboard,
        (r) => `${r.username} · ${r.score}${session && r.username === session.username ? " (you)" : ""}`,
        "no runs yet",
      );
      this.el.scoreboardStatus.textContent = "";
    } catch (err) {
      if (isUnauthenticated(err)) return this.onExpired();
      this.el.scoreboardStatus.textContent = `scores unavailable: ${errorText(err)}`;
    }
  }

  /** Empties both lists (the player logged out). */
  clear(): void {
    this.el.ownRuns.replaceChildren();
    this.el.leaderboard.replaceChildren();
  }
}

function renderRuns(list: HTMLElement, runs: readonly Run[], text: (r: Run) => string, empty: string): void {
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

function when(r: Run): string {
  if (!r.finishedAt) return "";
  const d = timestampDate(r.finishedAt);
  return ` · ${d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}`;
}
