import { Code, ConnectError } from "@connectrpc/connect";
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

/** Who started a game: only this user may send it inputs. */
export interface GameOwner {
  readonly username: string;
  /** The player's bearer token, forwarded on calls made on the player's behalf (e.g. the score). */
  readonly token: string;
  /** When `token` expires, if known. */
  readonly expiresAt?: Date;
}

/** One accepted key press. */
export interface InputRecord {
  readonly seq: number;
  readonly clientTimeMs: number;
  /** Table clock when the input arrived, ms. */
  readonly receivedAtMs: number;
  /** The next tick: the first whose movement the input affects (a flap sets the velocity at once). */
  readonly tick: number;
  readonly effect: InputEffect;
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
  /** Last creation, input or tick. */
  readonly lastActivityMs: number;
  /** Highest input sequence number received (0 before any). */
  readonly lastInputSeq: number;
  /**
   * Highest input sequence number the latest tick reflects: what its frame should echo. A flap
   * applied since that tick is already in `state` (its velocity); the game stream acks it itself.
   */
  readonly reflectedSeq: number;
  /** Accepted inputs in arrival order, the oldest dropped beyond `maxInputLog`. */
  readonly inputs: readonly InputRecord[];
}

type MutableGame = { -readonly [K in keyof Game]: Game[K] };

export interface NewGame {
  readonly id: string;
  readonly owner: GameOwner;
  readonly course: Course;
  /** Defaults to 34×24; a zero dimension takes the default's. */
  readonly bird?: BirdBox;
  readonly seed?: bigint;
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
  /** Epoch ms (default Date.now). */
  readonly clock?: () => number;
  /** How long a finished game stays before `sweep` removes it (default 60 s). */
  readonly finishedTtlMs?: number;
  /** How long an unfinished game may go without input or tick before `sweep` removes it (default 10 min). */
  readonly idleTtlMs?: number;
  /** Inputs kept per game (default 10 000). */
  readonly maxInputLog?: number;
  /** `create` sweeps at most this often, and always when the table is full (default 10 s). */
  readonly sweepIntervalMs?: number;
}

export const DEFAULT_MAX_GAMES = 10_000;
export const MAX_GAME_ID_LENGTH = 64;
const GAME_ID = /^[\x21-\x7e]+$/;

/** Why a game id is unusable, or undefined: 1…64 printable ASCII characters, no spaces. */
export function checkGameId(id: string): string | undefined {
  if (id.length === 0) return "game id is required";
  if (id.length > MAX_GAME_ID_LENGTH) return `game id longer than ${MAX_GAME_ID_LENGTH} characters`;
  if (!GAME_ID.test(id)) return "game id must be printable ASCII without spaces";
  return undefined;
}

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
  private readonly games = new Map<string, MutableGame>();
  private readonly clock: () => number;
  private readonly finishedTtlMs: number;
  private readonly idleTtlMs: number;
  private readonly maxInputLog: number;
  private readonly sweepIntervalMs: number;
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(options: GameTableOptions = {}) {
    this.maxGames = options.maxGames ?? DEFAULT_MAX_GAMES;
    this.clock = options.clock ?? Date.now;
    this.finishedTtlMs = options.finishedTtlMs ?? 60_000;
    this.idleTtlMs = options.idleTtlMs ?? 600_000;
    this.maxInputLog = options.maxInputLog ?? 10_000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 10_000;
    if (!Number.isInteger(this.maxGames) || this.maxGames < 1) {
      throw new RangeError(`maxGames must be a positive integer, got ${this.maxGames}`);
    }
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
   * AlreadyExists (id in use), ResourceExhausted (table full even after a sweep).
   */
  create(init: NewGame): Game {
    const idProblem = checkGameId(init.id);
    if (idProblem !== undefined) throw new ConnectError(idProblem, Code.InvalidArgument);
    const bird = birdOrDefault(init.bird);
    const problem = validateCourse(init.course, bird);
    if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
    if (this.games.has(init.id)) {
      throw new ConnectError(`game ${init.id} already exists`, Code.AlreadyExists);
    }
    const now = this.clock();
    if (this.games.size >= this.maxGames || now - this.lastSweepMs >= this.sweepIntervalMs) this.sweep();
    if (this.games.size >= this.maxGames) {
      throw new ConnectError(`the engine already holds ${this.maxGames} games`, Code.ResourceExhausted);
    }
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
      inputs: [],
    };
    this.games.set(game.id, game);
    return game;
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
    if (input.seq > game.lastInputSeq) game.lastInputSeq = input.seq;
    const tick = game.state.tick + 1;
    const inputs = game.inputs as InputRecord[];
    if (inputs.length >= this.maxInputLog) inputs.shift();
    inputs.push({ seq: input.seq, clientTimeMs: input.clientTimeMs, receivedAtMs: now, tick, effect });
    return { tick, phase: game.state.phase, effect };
  }

  /**
   * Runs one tick of game `id` with the inputs received since the last one. Returns the
   * tick's events (`ticked` false unless the game is playing), or undefined for an unknown id.
   * The frame is `viewOf(game.state)`, echoing `game.reflectedSeq`.
   */
  tick(id: string): StepEvents | undefined {
    const game = this.games.get(id);
    if (!game) return undefined;
    const events = tickInPlace(game.state);
    if (events.ticked) {
      game.reflectedSeq = game.lastInputSeq;
      game.lastActivityMs = this.clock();
      if (game.state.phase === "over") game.finishedAtMs = game.lastActivityMs;
    }
    return events;
  }

  delete(id: string): boolean {
    return this.games.delete(id);
  }

  /**
   * Removes games finished more than `finishedTtlMs` ago and unfinished games idle for more than
   * `idleTtlMs`. Returns how many were removed.
   */
  sweep(): number {
    const now = this.clock();
    this.lastSweepMs = now;
    let removed = 0;
    for (const [id, game] of this.games) {
      const expired =
        game.finishedAtMs !== undefined
          ? now - game.finishedAtMs >= this.finishedTtlMs
          : now - game.lastActivityMs >= this.idleTtlMs;
      if (expired) {
        this.games.delete(id);
        removed++;
      }
    }
    return removed;
  }
}
