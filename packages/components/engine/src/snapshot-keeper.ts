import { Code, ConnectError } from "@connectrpc/connect";
import { PlayState } from "@flaplab/contracts/engine/v1/engine_pb";
import type { GameSnapshot as SnapshotMessage } from "@flaplab/contracts/engine/v1/snapshot_pb";
import type { EngineBeat, SnapshotStore, StoredGame } from "@flaplab/snapshots";
import type { Game } from "./game.js";
import type { GameTable } from "./games.js";
import { checkStoredGame } from "./stored-checks.js";
import { fillSnapshot, gameOf, originOf, snapshotOf } from "./stored-game.js";
import { ThrottledWarning } from "./throttled-log.js";

export { checkStoredGame } from "./stored-checks.js";
export { gameOf, originOf, snapshotOf } from "./stored-game.js";

/** The logging the keeper needs; a pino logger fits. */
export interface KeeperLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SnapshotKeeperOptions {
  readonly store: SnapshotStore;
  /** This engine's name (its group in the topology). */
  readonly engine: string;
  readonly games: GameTable;
  readonly logger?: KeeperLogger;
  /** Epoch ms (default Date.now). */
  readonly clock?: () => number;
  /** Heartbeat period and time to live, ms (default 200 and 1000). */
  readonly heartbeatIntervalMs?: number;
  readonly heartbeatTtlMs?: number;
  /**
   * When a game's snapshot is written (default "every-round"): after every round it changed in,
   * or "on-leave": only when its stream ends before game over (its player may resume it), when it
   * hands over. `snapshotWritesFor(store)` says which a store needs.
   */
  readonly writes?: SnapshotWrites;
}

/** When a SnapshotKeeper writes a game's snapshot (see `SnapshotKeeperOptions.writes`). */
export type SnapshotWrites = "every-round" | "on-leave";

/**
 * The writes `store` needs: "on-leave" for the store in this process, "every-round" for any other.
 * The in-process store serves one engine (`openSnapshotStore` refuses it for more) and dies with
 * it, so a snapshot written every round is never read: only the one a game leaves with is (its
 * player resumes it). A shared store outlives the engine: another engine continues the game from
 * its latest round when this one dies.
 */
export function snapshotWritesFor(store: SnapshotStore): SnapshotWrites {
  return store.kind === "memory" ? "on-leave" : "every-round";
}

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 200;
export const DEFAULT_HEARTBEAT_TTL_MS = 1000;
/** Failed writes are logged at most this often, with a count of the others. */
const FAILURE_LOG_INTERVAL_MS = 5000;

/**
 * A game's record in a SnapshotKeeper: `changed` returns it, and takes it back to find the game
 * without a lookup by id.
 */
export interface KeptGameRef {
  readonly game: Game;
}

/** A game of this engine whose origin is in the store. */
interface KeptGame extends KeptGameRef {
  game: Game;
  /** No longer kept (it ended, moved, or was lost): a ref to it finds the game anew. */
  forgotten: boolean;
  /** Its snapshot message, made at its first batch and rewritten in place after that. */
  message: SnapshotMessage | undefined;
  /** Changed since its snapshot last went into a batch. */
  dirty: boolean;
  /** In the batch on its way to the store. */
  inFlight: boolean;
}

/**
 * Keeps the snapshot store up to date with this engine's live games: a game's origin once, then
 * its state after every tick, all games ticked in one scheduler round in one batch (written when
 * the round's synchronous work is done; a round that comes while a batch is on its way joins the
 * next one). Also continues games from the store (`resume`), beats this engine's heartbeat, and
 * says when it drains.
 */
export class SnapshotKeeper {
  readonly store: SnapshotStore;
  readonly engine: string;
  private readonly games: GameTable;
  private readonly logger: KeeperLogger | undefined;
  private readonly clock: () => number;
  /**
   * This engine's games whose origin is in the store, each with its snapshot message (rewritten in
   * place every round) and where it stands. The round's lists and batch are reused arrays, never
   * truncated to empty (as TickScheduler's due list: `length = 0` would drop their backing store,
   * and every round would grow a new one): a round allocates nothing per game (a store keeps what
   * it needs of a write before it returns).
   */
  private readonly kept = new Map<string, KeptGame>();
  /** Games changed since their last batch, in the order they changed: `changedGames[0, changedCount)`. */
  private readonly changedGames: (KeptGame | undefined)[] = [];
  private changedCount = 0;
  /** Games in the batch on its way to the store, `sending[0, sendingCount)`, and their snapshots (`batch`, as long as the batch). */
  private readonly sending: (KeptGame | undefined)[] = [];
  private sendingCount = 0;
  private readonly batch: SnapshotMessage[] = [];
  /** Who waits for a game's snapshot to be in the store. */
  private readonly waiters = new Map<string, Array<() => void>>();
  private flushQueued = false;
  private inFlight: Promise<void> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private readonly failures: ThrottledWarning;
  private readonly heartbeatIntervalMs: number;
  private readonly heartbeatTtlMs: number;
  readonly writes: SnapshotWrites;
  /**
   * Told of a game another engine took over (it resumed it: a partition, not a crash, cut this
   * engine's client off): this engine must stop playing it.
   */
  onLost: (gameId: string) => void = () => {};
  /** Snapshot batches written, and games in them (for stats and tests). */
  batches = 0;
  snapshotsWritten = 0;
  draining = false;

  constructor(options: SnapshotKeeperOptions) {
    this.store = options.store;
    this.engine = options.engine;
    this.games = options.games;
    this.logger = options.logger;
    this.clock = options.clock ?? Date.now;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.heartbeatTtlMs = options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS;
    this.writes = options.writes ?? "every-round";
    this.failures = new ThrottledWarning(this.logger, this.clock, FAILURE_LOG_INTERVAL_MS, "alsoFailed");
  }

  /**
   * Game `game` ticked (or took an input): its snapshot goes out with this round's batch (writing
   * "on-leave": only its origin, the first time). Returns its record; handing that back next time
   * (`known`) skips the lookup by id.
   */
  changed(game: Game, known?: KeptGameRef): KeptGameRef {
    const kept = this.record(game, known);
    if (this.writes === "every-round") this.mark(kept);
    return kept;
  }

  /**
   * Makes game `game`'s record (its origin goes to the store) without writing its snapshot: what a
   * game needs, writing "on-leave", to be written when it leaves.
   */
  track(game: Game, known?: KeptGameRef): KeptGameRef {
    return this.record(game, known);
  }

  /** As `changed`, whatever `writes` says: the game's snapshot goes out with this round's batch. */
  save(game: Game, known?: KeptGameRef): KeptGameRef {
    const kept = this.record(game, known);
    this.mark(kept);
    return kept;
  }

  /** Game `game`'s record, made (and its origin written) the first time. */
  private record(game: Game, known: KeptGameRef | undefined): KeptGame {
    let kept = known as KeptGame | undefined;
    if (kept === undefined || kept.forgotten || kept.game !== game) kept = this.kept.get(game.id);
    if (kept === undefined) {
      kept = { game, message: undefined, dirty: false, inFlight: false, forgotten: false };
      this.kept.set(game.id, kept);
      this.store.writeOrigin(originOf(game)).catch((err: unknown) => this.failed("origin", err));
    } else {
      kept.game = game;
    }
    return kept;
  }

  /** Puts `kept` in this round's batch. */
  private mark(kept: KeptGame): void {
    if (!kept.dirty) {
      kept.dirty = true;
      this.changedGames[this.changedCount++] = kept;
    }
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(this.flushRound);
  }

  /** The end of a round's synchronous work: its batch goes out, unless one is on its way. */
  private readonly flushRound = (): void => {
    this.flushQueued = false;
    if (this.inFlight === undefined) void this.flush();
  };

  /**
   * Resolves once the store has game `gameId`'s latest snapshot (the batch holding it has been
   * written, or has failed: then the store keeps an older one). At once when none is pending.
   */
  written(gameId: string): Promise<void> {
    const kept = this.kept.get(gameId);
    if (kept === undefined || (!kept.dirty && !kept.inFlight)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.waiters.get(gameId);
      if (list) list.push(resolve);
      else this.waiters.set(gameId, [resolve]);
    });
  }

  /** Writes every changed game's snapshot now, in one batch; resolves when the store has them. */
  async flush(): Promise<void> {
    while (this.inFlight !== undefined) await this.inFlight;
    if (this.changedCount === 0) return;
    const now = this.clock();
    // Reused: the batch before this one has been written (or has failed) by now.
    const { batch, sending, changedGames } = this;
    let n = 0;
    for (let i = 0; i < this.changedCount; i++) {
      const kept = changedGames[i] as KeptGame;
      changedGames[i] = undefined;
      // Forgotten since it changed.
      if (!kept.dirty) continue;
      kept.dirty = false;
      kept.inFlight = true;
      if (kept.message === undefined) kept.message = snapshotOf(kept.game, this.engine, now);
      else fillSnapshot(kept.message, kept.game, now);
      batch[n] = kept.message;
      sending[n++] = kept;
    }
    this.changedCount = 0;
    if (n === 0) return;
    // Shorter than before only: V8 trims in place; it never empties the array.
    batch.length = n;
    this.sendingCount = n;
    const write = this.store.writeSnapshots(this.engine, batch).then(
      (lost) => {
        this.batches++;
        this.snapshotsWritten += batch.length - lost.length;
        for (const gameId of lost) {
          this.drop(gameId);
          this.logger?.warn({ event: "game-lost", gameId }, "another engine continues this game; it stops here");
          this.onLost(gameId);
        }
      },
      (err: unknown) => this.failed("snapshots", err),
    );
    this.inFlight = write;
    await write;
    this.inFlight = undefined;
    for (let i = 0; i < this.sendingCount; i++) {
      const sent = sending[i] as KeptGame;
      sending[i] = undefined;
      sent.inFlight = false;
      // Nobody waits (a drain or a hand-over is rare): no lookups per game.
      if (this.waiters.size === 0) continue;
      const gameId = sent.game.id;
      // Changed again: its waiters wait for the next batch.
      if (this.kept.get(gameId)?.dirty) continue;
      const list = this.waiters.get(gameId);
      if (list === undefined) continue;
      this.waiters.delete(gameId);
      for (const resolve of list) resolve();
    }
    this.sendingCount = 0;
    // Rounds that came while this batch was on its way.
    if (this.changedCount > 0 && !this.flushQueued) void this.flush();
  }

  /**
   * The game ended, moved away or left: it is no longer written, and ended games leave the store.
   * Writing "on-leave", a game that left before game over (`ended` false) is written one last time.
   */
  forget(gameId: string, ended: boolean): void {
    const kept = this.drop(gameId);
    if (kept !== undefined && !ended && this.writes === "on-leave") this.mark(kept);
    if (ended) this.store.remove([gameId]).catch((err: unknown) => this.failed("remove", err));
  }

  /**
   * Game `gameId` left this process to be played by another process of this engine (a shard, whose
   * own keeper writes its snapshots as this engine's from now on): stops keeping it here, writing
   * and removing nothing.
   */
  handOff(gameId: string): void {
    this.drop(gameId);
  }

  /** Games kept now (their origin written, their snapshots written as they change). */
  get size(): number {
    return this.kept.size;
  }

  /** Stops keeping game `gameId` (nothing pending is written; a ref to it finds the game anew). */
  private drop(gameId: string): KeptGame | undefined {
    const kept = this.kept.get(gameId);
    if (kept !== undefined) {
      kept.dirty = false;
      kept.forgotten = true;
      this.kept.delete(gameId);
    }
    return kept;
  }

  /**
   * Continues game `gameId` of player `username` here from its stored snapshot (or returns it
   * when it is already here). NotFound when the store has no such game; PermissionDenied when
   * it is another player's; FailedPrecondition when it is over; ResourceExhausted when the
   * player's unfinished games here (`maxGamesPerPlayer`) are all being played, or the table is full.
   * Unavailable when another engine holds it and its heartbeat says it is up and not draining,
   * unless `holderTried`: the initiator's ResumeGame, which calls a live holder first and comes
   * here only when that call failed, so a killed engine's games go on without waiting for its
   * heartbeat to expire.
   */
  async resume(gameId: string, username: string, options: { readonly holderTried?: boolean } = {}): Promise<Game> {
    const here = this.games.get(gameId);
    if (here) {
      if (here.owner.username !== username) throw new ConnectError(`game ${gameId} belongs to another player`, Code.PermissionDenied);
      return here;
    }
    let stored: StoredGame | undefined;
    try {
      stored = await this.store.read(gameId);
    } catch (err) {
      throw new ConnectError(`the snapshot store cannot be read: ${(err as Error).message}`, Code.Unavailable);
    }
    if (!stored) throw new ConnectError(`game ${gameId} has no snapshot to continue from`, Code.NotFound);
    // What the store gives back is checked as a new game is: whoever can write the store must not
    // get a world the generator could not make, or a score the game could not have.
    const problem = checkStoredGame(stored, gameId);
    if (problem !== undefined) {
      this.logger?.warn({ event: "stored-game-refused", gameId, problem }, "a stored game fails the checks of a new game");
      throw new ConnectError(`stored game ${gameId} cannot be continued: ${problem}`, Code.DataLoss);
    }
    if (stored.origin.owner !== username) throw new ConnectError(`game ${gameId} belongs to another player`, Code.PermissionDenied);
    if (stored.snapshot.phase === PlayState.OVER) throw new ConnectError(`game ${gameId} is over`, Code.FailedPrecondition);
    // A game moves only from an engine that is gone or draining: one whose holder is up and taking
    // games stays there (the initiator sends ResumeGame to the holder first while it is up).
    const holder = stored.snapshot.engine;
    if (holder !== "" && holder !== this.engine && !options.holderTried) {
      let beats: EngineBeat[];
      try {
        beats = await this.store.liveEngines();
      } catch (err) {
        throw new ConnectError(`the snapshot store cannot be read: ${(err as Error).message}`, Code.Unavailable);
      }
      if (beats.some((b) => b.engine === holder && !b.draining)) {
        throw new ConnectError(`game ${gameId} is held by engine ${holder}, which is up: it continues there`, Code.Unavailable);
      }
    }
    // It may have arrived while the store was read (two resumes at once).
    const arrived = this.games.get(gameId);
    if (arrived) return arrived;
    // The player's limit here holds for a continued game as for a new one; asked before the claim,
    // so a refused game stays its holder's in the store.
    this.games.requireRoomFor(username);
    // From now on only this engine's snapshots of the game are written.
    try {
      await this.store.claim(gameId, this.engine);
    } catch (err) {
      throw new ConnectError(`the snapshot store cannot be written: ${(err as Error).message}`, Code.Unavailable);
    }
    const raced = this.games.get(gameId);
    if (raced) return raced;
    const game = this.games.adopt(gameOf(stored, this.clock()), { resumed: true });
    // Its origin is in the store already.
    this.kept.set(gameId, { game, message: undefined, dirty: false, inFlight: false, forgotten: false });
    this.logger?.info({ event: "game-resumed", gameId, tick: game.state.tick, from: stored.snapshot.engine }, "game continued from its snapshot");
    return game;
  }

  /** Beats this engine's heartbeat every interval, at once first. */
  startHeartbeats(): Promise<void> {
    const beat = () => this.store.heartbeat(this.beat(), this.heartbeatTtlMs).catch((err: unknown) => this.failed("heartbeat", err));
    this.heartbeat ??= setInterval(beat, this.heartbeatIntervalMs);
    this.heartbeat.unref();
    return beat();
  }

  /** This engine takes no new games: says so at once (the next heartbeats keep saying it). */
  async startDraining(): Promise<void> {
    this.draining = true;
    await this.store.heartbeat(this.beat(), this.heartbeatTtlMs).catch((err: unknown) => this.failed("heartbeat", err));
  }

  /** Stops the heartbeats and says this engine is gone. */
  async stop(): Promise<void> {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    await this.flush();
    await this.store.retire(this.engine).catch((err: unknown) => this.failed("retire", err));
  }

  private beat(): EngineBeat {
    return { engine: this.engine, games: this.games.size, maxGames: this.games.maxGames, draining: this.draining };
  }

  private failed(what: string, err: unknown): void {
    this.failures.warn({ event: "snapshot-store-error", what, err: (err as Error).message }, "snapshot store write failed");
  }
}
