import { Code, ConnectError } from "@connectrpc/connect";
import { checkGameId, MAX_GAME_ID_LENGTH } from "@flaplab/component";
import { type StepEvents, applyInputInPlace, createGame, tickInPlace, validateCourse } from "@flaplab/physics";
import { type Game, type GameSnapshot, type MutableGame, type NewGame, type AdoptOptions, type InputResult, birdOrDefault, plainGameOf } from "./game.js";
import { InputLog } from "./input-log.js";
import { DEFAULT_MAX_GAMES, DEFAULT_MAX_GAMES_PER_PLAYER, DEFAULT_SWEEP_INTERVAL_MS, DEFAULT_UNPLAYED_TTL_MS, type GameTableLogger, type GameTableOptions, type SweepResult } from "./game-table-options.js";
import { ThrottledWarning } from "./throttled-log.js";

export type { AdoptOptions, Game, GameOwner, GameSnapshot, InputResult, NewGame } from "./game.js";
export { birdOrDefault } from "./game.js";

export {
  DEFAULT_MAX_GAMES,
  DEFAULT_MAX_GAMES_PER_PLAYER,
  DEFAULT_SWEEP_INTERVAL_MS,
  DEFAULT_UNPLAYED_TTL_MS,
  type GameTableLogger,
  type GameTableOptions,
  type SweepResult,
} from "./game-table-options.js";

/** Refusals are logged at most this often (the first at once), with a count of the others. */
const REFUSAL_LOG_INTERVAL_MS = 5_000;
/** Why a game id is unusable, or undefined (shared by every component: `@flaplab/component`). */
export { checkGameId, MAX_GAME_ID_LENGTH };

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
  private readonly refusals: ThrottledWarning;

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
    this.refusals = new ThrottledWarning(this.logger, this.clock, REFUSAL_LOG_INTERVAL_MS, "alsoRefused");
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
    return plainGameOf(game);
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
    this.refusals.warn(fields, msg);
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

