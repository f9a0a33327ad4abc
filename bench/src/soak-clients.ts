// Child process of the soak: keeps `games` games going over the plain WebSocket link. Each game
// flaps on the schedule until a planned tick (200–1200 by default), then stops flapping, so the bird falls
// and the game ends on its own; when the engine has sent the game's summary and closed the
// session normally, a new game takes its place. A game that ends any other way is lost.
import { GameStream, wsConnector } from "@flaplab/game-client/node";
import { FlapBot, planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { serveRequests } from "./child.js";

export type SoakClientsRequest =
  | { type: "start"; wsUrl: string; gamesUrl: string; games: number; rampMs: number; seed: number; gameTicks: readonly [number, number] }
  | { type: "sample" }
  | { type: "stop" };

export interface SoakClientsSample {
  readonly open: number;
  readonly started: number;
  /** Games that ended with their summary (recorded) and a normal close. */
  readonly finished: number;
  /** Games that ended any other way (or never opened), by reason. */
  readonly lost: number;
  readonly lostReasons: Readonly<Record<string, number>>;
  /** The ids of the first games lost (up to `LOST_IDS_KEPT`), to find them in the engine's logs. */
  readonly lostGames: readonly string[];
  /** New games the server could not make (not games lost), by error. */
  readonly startFailed: number;
  readonly startFailures: Readonly<Record<string, number>>;
}

const bot = new FlapBot(planSurvival(EASY_SEED).flapTicks);
const connect = wsConnector();

let target = 0;
/** A game flaps until a tick drawn from this range, then lets the bird fall. */
let gameTicks: readonly [number, number] = [200, 1200];
let wsUrl = "";
let gamesUrl = "";
let running = false;
let open = 0;
let started = 0;
let finished = 0;
let lost = 0;
let lostReasons: Record<string, number> = {};
const LOST_IDS_KEPT = 10;
let lostGames: string[] = [];
let startFailed = 0;
let startFailures: Record<string, number> = {};
const games = new Set<GameStream>();
/** A seeded generator, so that two soaks plan the same game lengths. */
let state = 1;
const random = () => {
  state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
  return state / 2 ** 31;
};

function lose(gameId: string, reason: string): void {
  lost++;
  if (lostGames.length < LOST_IDS_KEPT) lostGames.push(gameId);
  lostReasons[reason] = (lostReasons[reason] ?? 0) + 1;
}

async function newGames(count: number): Promise<{ id: string; ticket: string }[]> {
  const res = await fetch(`${gamesUrl}?count=${count}`, { method: "POST" });
  if (!res.ok) throw new Error(`POST /games answered ${res.status}`);
  return (await res.json()) as { id: string; ticket: string }[];
}

/** Plays one game; resolves when it has ended (finished or lost). */
function play(game: { id: string; ticket: string }): Promise<void> {
  const stopAt = gameTicks[0] + Math.floor(random() * (gameTicks[1] - gameTicks[0]));
  started++;
  open++;
  return new Promise<void>((resolve) => {
    let summary = false;
    let recorded = false;
    const stream = new GameStream({
      gameId: game.id,
      home: { engineUrl: wsUrl, engineWsUrl: wsUrl, streamTicket: game.ticket },
      link: "websocket",
      connect,
      views: false,
      // Flaps on the schedule while the frame before the flap is before the planned tick.
      pressBefore: (tick) => tick <= stopAt && bot.flapsBefore(tick),
      hooks: {
        summary: (s) => {
          summary = true;
          recorded = s.recorded;
        },
        ended: (_kind, end) => {
          games.delete(stream);
          open--;
          if (!running && !summary) {
            // Cut at the end of the soak: neither finished nor lost.
          } else if (end.code === 0 && !end.failed && summary && recorded) {
            finished++;
          } else {
            lose(game.id, summary && !recorded ? "not recorded" : `${end.failed ? "connection lost" : end.code} ${end.reason}`.trim());
          }
          resolve();
        },
      },
    });
    games.add(stream);
    stream.open().then(
      () => stream.start(),
      (err: unknown) => {
        games.delete(stream);
        open--;
        lose(game.id, `${(err as Error).message}, never opened`);
        resolve();
      },
    );
  });
}

/** One slot: a game, then the next, until the soak stops. */
async function slot(first: { id: string; ticket: string }): Promise<void> {
  let game: { id: string; ticket: string } | undefined = first;
  while (running && game) {
    await play(game);
    game = undefined;
    // A game that could not be made is no game lost: it is counted apart, and tried again.
    while (running && !game) {
      try {
        game = (await newGames(1))[0];
      } catch (err) {
        startFailed++;
        const cause = (err as Error & { cause?: Error }).cause;
        const message = `${(err as Error).message}${cause ? ` (${cause.message})` : ""}`;
        startFailures[message] = (startFailures[message] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
}

serveRequests(async (req: SoakClientsRequest) => {
  switch (req.type) {
    case "start": {
      ({ wsUrl, gamesUrl, gameTicks } = req);
      target = req.games;
      state = req.seed;
      running = true;
      const t0 = performance.now();
      for (let made = 0; made < target; ) {
        const batch = await newGames(Math.min(100, target - made));
        for (const game of batch) {
          // Spread the starts over the ramp, so that the games' tick phases spread over the period.
          const wait = t0 + (made * req.rampMs) / target - performance.now();
          if (wait > 1) await new Promise((r) => setTimeout(r, wait));
          void slot(game);
          made++;
        }
      }
      return null;
    }
    case "sample": {
      const sample: SoakClientsSample = { open, started, finished, lost, lostReasons, lostGames, startFailed, startFailures };
      started = 0;
      finished = 0;
      lost = 0;
      lostReasons = {};
      lostGames = [];
      startFailed = 0;
      startFailures = {};
      return sample;
    }
    case "stop": {
      running = false;
      for (const game of games) game.close("soak over");
      const deadline = performance.now() + 10_000;
      while (games.size > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return { stillOpen: games.size };
    }
  }
});
