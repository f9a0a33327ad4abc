import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type GameOrigin, GameOriginSchema, type GameSnapshot, GameSnapshotSchema } from "@flaplab/contracts/engine/v1/snapshot_pb";
import type { EngineBeat, SnapshotStore, StoredGame } from "./store.js";

/**
 * A snapshot store in this process: for a deployment with one engine (nothing to start) and for
 * tests. It keeps a copy of each game's latest snapshot, copied field by field into the one it
 * kept before (no allocation per write, nothing encoded: a writer may reuse its message), and a
 * read gets a copy of its own, so it still sees the game as it was at its latest write. A game's
 * origin (its whole course) is kept encoded: one buffer instead of a message per pipe, which
 * thousands of games' worth would leave for every major collection to trace.
 */
export class MemorySnapshotStore implements SnapshotStore {
  readonly kind = "memory";
  /** Each game's origin, latest snapshot and owning engine, in one entry: one lookup per write. */
  private readonly games = new Map<string, StoredEntry>();
  private readonly beats = new Map<string, { beat: EngineBeat; untilMs: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  private entry(gameId: string): StoredEntry {
    let entry = this.games.get(gameId);
    if (entry === undefined) {
      entry = { origin: undefined, snapshot: undefined, owner: undefined };
      this.games.set(gameId, entry);
    }
    return entry;
  }

  async writeOrigin(origin: GameOrigin): Promise<void> {
    this.entry(origin.gameId).origin = toBinary(GameOriginSchema, origin);
  }

  async writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]> {
    const lost: string[] = [];
    for (const s of snapshots) {
      const entry = this.entry(s.gameId);
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
    this.entry(gameId).owner = engine;
  }

  async read(gameId: string): Promise<StoredGame | undefined> {
    const entry = this.games.get(gameId);
    if (!entry?.origin || !entry.snapshot) return undefined;
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
