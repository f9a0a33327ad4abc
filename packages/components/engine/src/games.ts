import { Code, ConnectError } from "@connectrpc/connect";
import { checkGameId, MAX_GAME_ID_LENGTH } from "@flaplab/component";
import {
  type BirdBox,
  type Course,
  DEFAULT_BIRD,
  type GameState,
  type InputEffect,
  type Phase,
  type StepEvents,
  applyInputInPlace,
  createGame,
  tickInPlace,
  validateCourse,
} from "@flaplab/physics";
import { InputLog, type InputRecord } from "./input-log.js";
import { GAME_TABLE_SETTINGS } from "./settings.js";

/** Who started a game: only this user may send it inputs. */
export interface GameOwner {
  readonly username: string;
  /** The player's bearer token, forwarded on calls made on the player's behalf (e.g. the score). */
  readonly token: string;
  /** When `token` expires, if known. */
  readonly expiresAt?: Date;
}

/**
 * A game in the table. Read it freely; change it only through the table. `state` is the
 * physics state, mutated in place by `GameTable.input` and `GameTable.tick`.
 */
export interface Game {
  readonly id: string;
  readonly owner: GameOwner;
  readonly seed: bigint;
  readonly state: GameState;
  readonly createdAtMs: number;
  /** When the start press arrived. */
  readonly startedAtMs: number | undefined;
  /** When the game-over tick ran. */
  readonly finishedAtMs: number | undefined;
  /**
   * Last creation or input; for a game that ticks, the last sweep that saw it tick (within one
   * sweep interval of its latest tick). Its ticks are not timed one by one: a clock read per tick
   * was a new heap number per frame.
   */
  readonly lastActivityMs: number;
  /** Highest input sequence number received (0 before any). */
  readonly lastInputSeq: number;
  /**
   * Highest input sequence number the latest tick reflects: what its frame should echo. A flap
   * applied since that tick is already in `state` (its velocity); the game stream acks it itself.
   */
  readonly reflectedSeq: number;
  /** Accepted inputs in arrival order, the oldest dropped beyond `maxInputLog`. */
  readonly inputs: InputLog;
  /**
   * W3C `traceparent` of the call that started the game, when tracing is on: the game's own calls
   * (PlayMusic, RecordRun) are made in that trace, on whichever engine plays it.
   */
  readonly traceparent?: string | undefined;
}

/** A game as the table holds it: `table` is the table it is in now (undefined once it left). */
type MutableGame = { -readonly [K in keyof Game]: Game[K] } & {
  table: GameTable | undefined;
  /** The game's tick when a sweep last looked at it: a game whose tick moved on since is active. */
  sweptAtTick: number;
  /**
   * Continued from a snapshot (`adopt` with `resumed`) and not played on since (no input, no
   * tick): when that began. Such a game is swept after `unplayedTtlMs`, like one never started,
   * and is the first a new game of its owner replaces.
   */
  waitingSinceMs: number | undefined;
};

/** How `GameTable.adopt` takes a game in. */
export interface AdoptOptions {
  /**
   * Continued from the snapshot store (ResumeGame, a hand-over, a stream opened here): it counts
   * against its owner's `maxGamesPerPlayer` here as a new game does (replacing their oldest game
   * nobody plays, else ResourceExhausted), and until it is played on it is swept as unplayed.
   * Without it (a game detached from another table of this engine) the detaching table keeps the
   * owner's limit.
   */
  readonly resumed?: boolean;
}

/**
 * A game as plain data (structured-cloneable: what `postMessage` and a child process's advanced
 * IPC serialization carry), to move it to another process: `GameTable.detach` makes one,
 * `GameTable.adopt` plays it on.
 */
export type GameSnapshot = Omit<Game, "inputs"> & { readonly inputs: readonly InputRecord[] };

export interface NewGame {
  readonly id: string;
  readonly owner: GameOwner;
  readonly course: Course;
  /** Defaults to 34×24; a zero dimension takes the default's. */
  readonly bird?: BirdBox;
  readonly seed?: bigint;
  /** The trace the game was started in (see `Game.traceparent`). */
  readonly traceparent?: string | undefined;
}

export interface InputResult {
  /** The next tick: the first whose movement the input affects. */
  readonly tick: number;
  /** The game's phase after the input. */
  readonly phase: Phase;
  readonly effect: InputEffect;
}

export interface GameTableOptions {
  /** Most games held at once (default 10 000); StartGame beyond it is ResourceExhausted. */
  readonly maxGames?: number;
  /**
   * Most unfinished games (ready or playing) one player may hold (default 3). At the limit a new
   * game replaces the player's oldest game that never started; when all of them have started,
   * `create` throws ResourceExhausted.
   */
  readonly maxGamesPerPlayer?: number;
  /** Epoch ms (default Date.now). */
  readonly clock?: () => number;
  /** How long a finished game stays before `sweep` removes it (default 60 s). */
  readonly finishedTtlMs?: number;
  /** How long a game that never started (no first input) stays before `sweep` removes it (default 60 s). */
  readonly unplayedTtlMs?: number;
  /**
   * How long a started, unfinished game may go without input or tick before `sweep` removes it
   * (default 10 min; a game's ticks count as seen by the sweeps, so up to one sweep interval more).
   */
  readonly idleTtlMs?: number;
  /** Inputs kept per game (default 1 000). */
  readonly maxInputLog?: number;
  /**
   * Period of the sweep timer, ms (default 10 s; 0: no timer, `sweep` runs only from `create`).
   * `create` also sweeps at most this often, and always when the table is full.
   */
  readonly sweepIntervalMs?: number;
  /** Where sweeps that removed games and refusals are logged (pino-compatible). */
  readonly logger?: GameTableLogger;
}

/** The part of a pino logger the table uses. */
export interface GameTableLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** What one sweep removed, by reason. */
export interface SweepResult {
  readonly finished: number;
  readonly unplayed: number;
  readonly idle: number;
}

export const DEFAULT_MAX_GAMES = GAME_TABLE_SETTINGS.maxGames.default;
export const DEFAULT_MAX_GAMES_PER_PLAYER = GAME_TABLE_SETTINGS.maxGamesPerPlayer.default;
export const DEFAULT_UNPLAYED_TTL_MS = GAME_TABLE_SETTINGS.unplayedTtlMs.default;
export const DEFAULT_SWEEP_INTERVAL_MS = GAME_TABLE_SETTINGS.sweepIntervalMs.default;
/** Refusals are logged at most this often (the first at once), with a count of the others. */
const REFUSAL_LOG_INTERVAL_MS = 5_000;
/** Why a game id is unusable, or undefined (shared by every component: `@flaplab/component`). */
export { checkGameId, MAX_GAME_ID_LENGTH };

/** The bird box to play with: a zero (unset) dimension takes the 34×24 default's. */
export function birdOrDefault(bird: BirdBox | undefined): BirdBox {
  return {
    width: bird?.width || DEFAULT_BIRD.width,
    height: bird?.height || DEFAULT_BIRD.height,
  };
}

/**
 * Every game this engine owns, by id. The RPC handlers create games and apply inputs; the real-time
 * loop calls `tick` every 33 ms per playing game. Single-threaded: no locking needed.
 */
export class GameTable {
  readonly maxGames: number;
  readonly maxGamesPerPlayer: number;
  private readonly games = new Map<string, MutableGame>();
  /** Unfinished games (ready or playing) of each player, in creation order. */
  private readonly unfinished = new Map<string, Set<string>>();
  /** Games detached to another process: id → owner and when, until `release` (or the sweep). */
  private readonly detached = new Map<string, { username: string; atMs: number }>();
  private readonly clock: () => number;
  private readonly finishedTtlMs: number;
  private readonly unplayedTtlMs: number;
  private readonly idleTtlMs: number;
  private readonly maxInputLog: number;
  private readonly sweepIntervalMs: number;
  private readonly logger: GameTableLogger | undefined;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private lastSweepMs = Number.NEGATIVE_INFINITY;
  private refusals = { lastLogMs: Number.NEGATIVE_INFINITY, unlogged: 0 };

  constructor(options: GameTableOptions = {}) {
    this.maxGames = options.maxGames ?? DEFAULT_MAX_GAMES;
    this.maxGamesPerPlayer = options.maxGamesPerPlayer ?? DEFAULT_MAX_GAMES_PER_PLAYER;
    this.clock = options.clock ?? Date.now;
    this.finishedTtlMs = options.finishedTtlMs ?? 60_000;
    this.unplayedTtlMs = options.unplayedTtlMs ?? DEFAULT_UNPLAYED_TTL_MS;
    this.idleTtlMs = options.idleTtlMs ?? 600_000;
    this.maxInputLog = options.maxInputLog ?? 1_000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    this.logger = options.logger;
    const positive = (name: string, value: number) => {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
    };
    positive("maxGames", this.maxGames);
    positive("maxGamesPerPlayer", this.maxGamesPerPlayer);
    positive("unplayedTtlMs", this.unplayedTtlMs);
    if (!Number.isInteger(this.sweepIntervalMs) || this.sweepIntervalMs < 0) {
      throw new RangeError(`sweepIntervalMs must be a whole number of ms, got ${this.sweepIntervalMs}`);
    }
    if (this.sweepIntervalMs > 0) {
      // Games nobody plays must go even when nobody creates games: sweep on a timer.
      this.timer = setInterval(() => this.sweep(), this.sweepIntervalMs);
      this.timer.unref();
    }
  }

  /** Stops the sweep timer. The games stay. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  /** How many unfinished games (ready or playing) `username` holds. */
  unfinishedCount(username: string): number {
    return this.unfinished.get(username)?.size ?? 0;
  }

  get size(): number {
    return this.games.size;
  }

  get(id: string): Game | undefined {
    return this.games.get(id);
  }

  has(id: string): boolean {
    return this.games.has(id);
  }

  /** All games, in creation order. */
  values(): IterableIterator<Game> {
    return this.games.values();
  }

  [Symbol.iterator](): IterableIterator<Game> {
    return this.games.values();
  }

  /**
   * Adds a game in the Ready state. Throws ConnectError: InvalidArgument (bad id, course or bird),
   * AlreadyExists (id in use), ResourceExhausted (the owner holds `maxGamesPerPlayer` unfinished
   * games that all started, or the table is full even after a sweep). At the per-player limit the
   * owner's oldest game that never started is removed to make room.
   */
  create(init: NewGame): Game {
    const idProblem = checkGameId(init.id);
    if (idProblem !== undefined) throw new ConnectError(idProblem, Code.InvalidArgument);
    const bird = birdOrDefault(init.bird);
    const problem = validateCourse(init.course, bird);
    if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
    if (this.games.has(init.id) || this.detached.has(init.id)) {
      throw new ConnectError(`game ${init.id} already exists`, Code.AlreadyExists);
    }
    const now = this.clock();
    this.makeRoomFor(init.owner.username, init.id);
    if (this.games.size >= this.maxGames || now - this.lastSweepMs >= this.sweepIntervalMs) this.sweep();
    if (this.games.size >= this.maxGames) throw this.tableFull();
    const game: MutableGame = {
      id: init.id,
      owner: {
        username: init.owner.username,
        token: init.owner.token,
        ...(init.owner.expiresAt ? { expiresAt: init.owner.expiresAt } : {}),
      },
      seed: init.seed ?? 0n,
      state: createGame(init.course, bird),
      createdAtMs: now,
      startedAtMs: undefined,
      finishedAtMs: undefined,
      lastActivityMs: now,
      lastInputSeq: 0,
      reflectedSeq: 0,
      inputs: new InputLog(this.maxInputLog),
      traceparent: init.traceparent,
      table: this,
      sweptAtTick: 0,
      waitingSinceMs: undefined,
    };
    this.games.set(game.id, game);
    let mine = this.unfinished.get(game.owner.username);
    if (!mine) this.unfinished.set(game.owner.username, (mine = new Set()));
    mine.add(game.id);
    return game;
  }

  /**
   * Takes game `id` out of the table to be played in another process: returns it as a snapshot
   * (undefined for an unknown id). The id stays reserved, and counts as one of its owner's
   * unfinished games, until `release(id)` (the other process reports the game's end) or, should
   * that never come, the sweep after `idleTtlMs`. `isDetached(id)` is true meanwhile.
   */
  detach(id: string): GameSnapshot | undefined {
    const game = this.games.get(id);
    if (!game) return undefined;
    this.games.delete(id);
    game.table = undefined;
    this.detached.set(id, { username: game.owner.username, atMs: this.clock() });
    return snapshotOf(game);
  }

  isDetached(id: string): boolean {
    return this.detached.has(id);
  }

  /** Ends the reservation of a detached game: its owner may start another in its place. */
  release(id: string): boolean {
    const held = this.detached.get(id);
    if (!held) return false;
    this.detached.delete(id);
    this.forget(held.username, id);
    return true;
  }

  /**
   * Plays on a game detached from another table, or continued from a snapshot (`resumed`, see
   * `AdoptOptions`). AlreadyExists when the id is in use here; ResourceExhausted when the table is
   * full, or (`resumed`) when the owner holds `maxGamesPerPlayer` unfinished games here that are
   * all being played.
   */
  adopt(snapshot: GameSnapshot, options: AdoptOptions = {}): Game {
    if (this.games.has(snapshot.id) || this.detached.has(snapshot.id)) {
      throw new ConnectError(`game ${snapshot.id} already exists`, Code.AlreadyExists);
    }
    if (options.resumed && snapshot.state.phase !== "over") this.makeRoomFor(snapshot.owner.username, snapshot.id);
    if (this.games.size >= this.maxGames) this.sweep();
    if (this.games.size >= this.maxGames) throw this.tableFull();
    const inputs = new InputLog(this.maxInputLog);
    for (const r of snapshot.inputs) inputs.push(r.seq, r.clientTimeMs, r.receivedAtMs, r.tick, r.effect);
    const game: MutableGame = {
      ...snapshot,
      owner: { ...snapshot.owner },
      inputs,
      table: this,
      sweptAtTick: snapshot.state.tick,
      waitingSinceMs: options.resumed ? this.clock() : undefined,
    };
    this.games.set(game.id, game);
    if (game.state.phase !== "over") {
      let mine = this.unfinished.get(game.owner.username);
      if (!mine) this.unfinished.set(game.owner.username, (mine = new Set()));
      mine.add(game.id);
    }
    return game;
  }

  private forget(username: string, id: string): void {
    const mine = this.unfinished.get(username);
    if (!mine) return;
    mine.delete(id);
    if (mine.size === 0) this.unfinished.delete(username);
  }

  /**
   * Throws the ResourceExhausted that taking one more unfinished game of `username` in here would
   * meet: the table full even after a sweep, or the player's `maxGamesPerPlayer` games all being
   * played (no game nobody plays for a new one to replace). Changes no game: ResumeGame asks before
   * it claims a game in the store, so that a refused game stays its holder's.
   */
  requireRoomFor(username: string): void {
    if (this.games.size >= this.maxGames) this.sweep();
    if (this.games.size >= this.maxGames) throw this.tableFull();
    const mine = this.unfinished.get(username);
    if (!mine || mine.size < this.maxGamesPerPlayer) return;
    for (const id of mine) if (this.replaceable(this.games.get(id))) return;
    throw this.playerLimit(username, mine.size);
  }

  private tableFull(): ConnectError {
    this.refused({ event: "game-refused", reason: "table-full", maxGames: this.maxGames }, "engine game table is full");
    return new ConnectError(`the engine already holds ${this.maxGames} games; try again in a minute`, Code.ResourceExhausted);
  }

  private playerLimit(username: string, held: number): ConnectError {
    this.refused(
      { event: "game-refused", reason: "player-limit", player: username, maxGamesPerPlayer: this.maxGamesPerPlayer },
      "player holds too many games",
    );
    return new ConnectError(
      `player ${username} already has ${held} games in progress (at most ${this.maxGamesPerPlayer}); finish one first`,
      Code.ResourceExhausted,
    );
  }

  /** A game a new game of its owner may replace: never started, or continued here and not played on since. */
  private replaceable(game: MutableGame | undefined): game is MutableGame {
    return game !== undefined && (game.startedAtMs === undefined || (game.waitingSinceMs !== undefined && game.state.tick === game.sweptAtTick));
  }

  /**
   * Keeps a player under `maxGamesPerPlayer` unfinished games: at the limit, removes their oldest
   * game nobody plays (never started, or continued here and not played on), or throws
   * ResourceExhausted when every one of them is being played.
   */
  private makeRoomFor(username: string, newId: string): void {
    const mine = this.unfinished.get(username);
    if (!mine || mine.size < this.maxGamesPerPlayer) return;
    for (const id of mine) {
      const game = this.games.get(id);
      if (this.replaceable(game)) {
        this.delete(id);
        this.logger?.info({ event: "game-replaced", gameId: id, by: newId, player: username }, "oldest unplayed game replaced");
        return;
      }
    }
    throw this.playerLimit(username, mine.size);
  }

  /** Logs a refusal: the first at once, then at most one line per interval with the count since. */
  private refused(fields: object, msg: string): void {
    const now = this.clock();
    if (now - this.refusals.lastLogMs < REFUSAL_LOG_INTERVAL_MS) {
      this.refusals.unlogged++;
      return;
    }
    this.logger?.warn({ ...fields, alsoRefused: this.refusals.unlogged }, msg);
    this.refusals = { lastLogMs: now, unlogged: 0 };
  }

  private finish(game: MutableGame): void {
    this.forget(game.owner.username, game.id);
  }

  /**
   * One key press from `username`. Ready → playing (no flap); playing → a flap, applied at once
   * (the velocity becomes -4.6; the bird moves at the next tick). Throws ConnectError: NotFound (unknown id), PermissionDenied (not the owner),
   * FailedPrecondition (the game is over).
   */
  input(id: string, username: string, input: { seq: number; clientTimeMs: number }): InputResult {
    const game = this.games.get(id);
    if (!game) throw new ConnectError(`game ${id} not found`, Code.NotFound);
    if (game.owner.username !== username) {
      throw new ConnectError(`game ${id} belongs to another player`, Code.PermissionDenied);
    }
    if (game.state.phase === "over") throw new ConnectError(`game ${id} is over`, Code.FailedPrecondition);
    const now = this.clock();
    const effect = applyInputInPlace(game.state);
    if (effect === "started") game.startedAtMs = now;
    game.lastActivityMs = now;
    game.waitingSinceMs = undefined;
    if (input.seq > game.lastInputSeq) game.lastInputSeq = input.seq;
    const tick = game.state.tick + 1;
    game.inputs.push(input.seq, input.clientTimeMs, now, tick, effect);
    return { tick, phase: game.state.phase, effect };
  }

  /**
   * Runs one tick of game `id` with the inputs received since the last one. Returns the
   * tick's events (`ticked` false unless the game is playing), or undefined for an unknown id.
   * The frame is `viewOf(game.state)`, echoing `game.reflectedSeq`.
   */
  tick(id: string): StepEvents | undefined {
    const game = this.games.get(id);
    return game ? this.step(game) : undefined;
  }

  /**
   * `tick(game.id)` for a game object held here, found without a lookup by id (the real-time loop
   * has it at hand); undefined when `game` is no longer in this table.
   */
  tickGame(game: Game): StepEvents | undefined {
    const held = game as MutableGame;
    return held.table === this ? this.step(held) : undefined;
  }

  private step(game: MutableGame): StepEvents {
    const events = tickInPlace(game.state);
    if (events.ticked) {
      game.reflectedSeq = game.lastInputSeq;
      // No clock read per tick (the sweep sees a ticking game move on): only its last tick is timed.
      if (game.state.phase === "over") {
        game.finishedAtMs = game.lastActivityMs = this.clock();
        this.finish(game);
      }
    }
    return events;
  }

  delete(id: string): boolean {
    const game = this.games.get(id);
    if (!game) return false;
    this.finish(game);
    game.table = undefined;
    return this.games.delete(id);
  }

  /**
   * Removes games finished more than `finishedTtlMs` ago, games that never started created more
   * than `unplayedTtlMs` (or `idleTtlMs`, if shorter) ago, and started, unfinished games idle for more than `idleTtlMs`. Runs on
   * the table's timer and from `create`. Returns how many were removed.
   */
  sweep(): number {
    const { finished, unplayed, idle } = this.sweepByReason();
    return finished + unplayed + idle;
  }

  /** `sweep`, with the count of each reason. */
  sweepByReason(): SweepResult {
    const now = this.clock();
    this.lastSweepMs = now;
    let finished = 0;
    let unplayed = 0;
    let idle = 0;
    // values(), not entries(): an [id, game] pair per game would be garbage on every sweep.
    for (const game of this.games.values()) {
      if (game.finishedAtMs !== undefined) {
        if (now - game.finishedAtMs < this.finishedTtlMs) continue;
        finished++;
      } else if (game.startedAtMs === undefined) {
        if (now - game.createdAtMs < this.unplayedTtlMs && now - game.lastActivityMs < this.idleTtlMs) continue;
        unplayed++;
      } else if (game.waitingSinceMs !== undefined && game.state.tick === game.sweptAtTick) {
        // Continued here, and nothing played it since: as a game never started.
        if (now - game.waitingSinceMs < this.unplayedTtlMs) continue;
        unplayed++;
      } else {
        game.waitingSinceMs = undefined;
        if (game.state.tick !== game.sweptAtTick) {
          // It ticked since the last sweep: active now.
          game.sweptAtTick = game.state.tick;
          game.lastActivityMs = now;
        }
        if (now - game.lastActivityMs < this.idleTtlMs) continue;
        idle++;
      }
      this.delete(game.id);
    }
    // A detached game whose end never came back (its process died) stops holding its id and slot.
    for (const [id, held] of this.detached) {
      if (now - held.atMs < this.idleTtlMs) continue;
      this.release(id);
      idle++;
    }
    const result = { finished, unplayed, idle };
    if (finished + unplayed + idle > 0) {
      this.logger?.info({ event: "games-swept", ...result, games: this.games.size }, "removed expired games");
    }
    return result;
  }
}

function snapshotOf(game: Game): GameSnapshot {
  return {
    id: game.id,
    owner: { ...game.owner },
    seed: game.seed,
    state: game.state,
    createdAtMs: game.createdAtMs,
    startedAtMs: game.startedAtMs,
    finishedAtMs: game.finishedAtMs,
    lastActivityMs: game.lastActivityMs,
    lastInputSeq: game.lastInputSeq,
    reflectedSeq: game.reflectedSeq,
    inputs: game.inputs.toArray(),
    traceparent: game.traceparent,
  };
}
