import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type GameOrigin, GameOriginSchema, type GameSnapshot, GameSnapshotSchema } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { type EngineBeat, SNAPSHOT_TTL_MS, type SnapshotStore, type StoredGame } from "./store.js";

export interface MemorySnapshotStoreOptions {
  /** How long a stored game outlives its latest write (origin, snapshot or claim), ms (default 15 min). */
  readonly ttlMs?: number;
}

/** Expired games are purged, by a write, at most this often (and at least once per time to live). */
const PURGE_INTERVAL_MS = 1000;

/**
 * A snapshot store in this process: for a deployment with one engine (nothing to start) and for
 * tests. It keeps a copy of each game's latest snapshot, copied field by field into the one it
 * kept before (no allocation per write, nothing encoded: a writer may reuse its message), and a
 * read gets a copy of its own, so it still sees the game as it was at its latest write. A game's
 * origin (its whole course) is kept encoded: one buffer instead of a message per pipe, which
 * thousands of games' worth would leave for every major collection to trace.
 *
 * A game expires `ttlMs` after its latest write, as Redis keys do: a read of it finds nothing, and
 * a write purges the expired games (at most once a second), so the store holds only the games
 * written within about the last `ttlMs`, however many games were abandoned before.
 */
export class MemorySnapshotStore implements SnapshotStore {
  readonly kind = "memory";
  /** Each game's origin, latest snapshot and owning engine, in one entry: one lookup per write. */
  private readonly games = new Map<string, StoredEntry>();
  private readonly beats = new Map<string, { beat: EngineBeat; untilMs: number }>();
  readonly ttlMs: number;
  private purgedAtMs: number;

  constructor(
    private readonly clock: () => number = Date.now,
    options: MemorySnapshotStoreOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? SNAPSHOT_TTL_MS;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 1) throw new RangeError(`ttlMs must be a whole number of ms ≥ 1, got ${this.ttlMs}`);
    this.purgedAtMs = clock();
  }

  /** Games held, expired ones not yet purged included. */
  get size(): number {
    return this.games.size;
  }

  /** A game's entry, made when missing, its expiry moved to `now + ttlMs`; purges first when due. */
  private entry(gameId: string, now: number): StoredEntry {
    if (now - this.purgedAtMs >= Math.min(PURGE_INTERVAL_MS, this.ttlMs)) this.purge(now);
    let entry = this.games.get(gameId);
    if (entry === undefined || entry.expiresAtMs <= now) {
      entry = { gameId, origin: undefined, snapshot: undefined, owner: undefined, expiresAtMs: 0 };
      this.games.set(gameId, entry);
    }
    entry.expiresAtMs = now + this.ttlMs;
    return entry;
  }

  /** Forgets every game whose time to live ran out. */
  private purge(now: number): void {
    this.purgedAtMs = now;
    // values() of a Map tolerates deletes while iterating; no [key, value] pair per game.
    for (const entry of this.games.values()) {
      if (entry.expiresAtMs <= now) this.games.delete(entry.gameId);
    }
  }

  async writeOrigin(origin: GameOrigin): Promise<void> {
    this.entry(origin.gameId, this.clock()).origin = toBinary(GameOriginSchema, origin);
  }

  async writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]> {
    const lost: string[] = [];
    const now = this.clock();
    for (const s of snapshots) {
      const entry = this.entry(s.gameId, now);
      if (entry.owner !== undefined && entry.owner !== engine) {
        lost.push(s.gameId);
        continue;
      }
      entry.owner = engine;
      // A copy: a writer may reuse its message for its next snapshot. Copied into the one kept
      // already (scalar fields only), so a game's snapshots allocate once.
      if (entry.snapshot) copySnapshot(entry.snapshot, s);
      else entry.snapshot = copySnapshot(create(GameSnapshotSchema), s);
    }
    return lost;
  }

  async claim(gameId: string, engine: string): Promise<void> {
    this.entry(gameId, this.clock()).owner = engine;
  }

  async read(gameId: string): Promise<StoredGame | undefined> {
    const entry = this.games.get(gameId);
    if (!entry?.origin || !entry.snapshot) return undefined;
    if (entry.expiresAtMs <= this.clock()) {
      this.games.delete(gameId);
      return undefined;
    }
    // Copies: the kept snapshot changes with the next write.
    return { origin: fromBinary(GameOriginSchema, entry.origin), snapshot: copySnapshot(create(GameSnapshotSchema), entry.snapshot) };
  }

  async remove(gameIds: readonly string[]): Promise<void> {
    for (const id of gameIds) this.games.delete(id);
  }

  async heartbeat(beat: EngineBeat, ttlMs: number): Promise<void> {
    this.beats.set(beat.engine, { beat: { ...beat }, untilMs: this.clock() + ttlMs });
  }

  async retire(engine: string): Promise<void> {
    this.beats.delete(engine);
  }

  async liveEngines(): Promise<EngineBeat[]> {
    const now = this.clock();
    return [...this.beats.values()].filter((b) => b.untilMs > now).map((b) => b.beat);
  }

  async close(): Promise<void> {}
}

interface StoredEntry {
  readonly gameId: string;
  /** Epoch ms after which the game is gone (its latest write + the time to live). */
  expiresAtMs: number;
  /** Encoded. */
  origin: Uint8Array | undefined;
  snapshot: GameSnapshot | undefined;
  owner: string | undefined;
}

/** Copies every field of `from` into `into` (all scalars), field by field: no allocation once `into` holds doubles. */
function copySnapshot(into: GameSnapshot, from: GameSnapshot): GameSnapshot {
  into.gameId = from.gameId;
  into.engine = from.engine;
  into.phase = from.phase;
  into.tick = from.tick;
  into.birdY = from.birdY;
  into.birdVelocity = from.birdVelocity;
  into.pipeSpeed = from.pipeSpeed;
  into.pipeWindowX = from.pipeWindowX;
  into.closestPipe = from.closestPipe;
  into.score = from.score;
  into.lastInputSeq = from.lastInputSeq;
  into.reflectedSeq = from.reflectedSeq;
  into.startedAtMs = from.startedAtMs;
  into.writtenAtMs = from.writtenAtMs;
  return into;
}
