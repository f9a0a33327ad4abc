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
  private readonly origins = new Map<string, Uint8Array>();
  private readonly snapshots = new Map<string, GameSnapshot>();
  private readonly owners = new Map<string, string>();
  private readonly beats = new Map<string, { beat: EngineBeat; untilMs: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  async writeOrigin(origin: GameOrigin): Promise<void> {
    this.origins.set(origin.gameId, toBinary(GameOriginSchema, origin));
  }

  async writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]> {
    const lost: string[] = [];
    for (const s of snapshots) {
      const owner = this.owners.get(s.gameId);
      if (owner !== undefined && owner !== engine) {
        lost.push(s.gameId);
        continue;
      }
      this.owners.set(s.gameId, engine);
      // A copy: a writer may reuse its message for its next snapshot. Copied into the one kept
      // already (scalar fields only), so a game's snapshots allocate once.
      const kept = this.snapshots.get(s.gameId);
      if (kept) copySnapshot(kept, s);
      else this.snapshots.set(s.gameId, copySnapshot(create(GameSnapshotSchema), s));
    }
    return lost;
  }

  async claim(gameId: string, engine: string): Promise<void> {
    this.owners.set(gameId, engine);
  }

  async read(gameId: string): Promise<StoredGame | undefined> {
    const origin = this.origins.get(gameId);
    const snapshot = this.snapshots.get(gameId);
    if (!origin || !snapshot) return undefined;
    // Copies: the kept snapshot changes with the next write.
    return { origin: fromBinary(GameOriginSchema, origin), snapshot: copySnapshot(create(GameSnapshotSchema), snapshot) };
  }

  async remove(gameIds: readonly string[]): Promise<void> {
    for (const id of gameIds) {
      this.origins.delete(id);
      this.snapshots.delete(id);
      this.owners.delete(id);
    }
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
