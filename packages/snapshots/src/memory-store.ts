import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { GameOriginSchema, GameSnapshotSchema, type GameOrigin, type GameSnapshot } from "@flaplab/contracts/engine/v1/snapshot_pb";
import type { EngineBeat, SnapshotStore, StoredGame } from "./store.js";

/**
 * A snapshot store in this process: for a deployment with one engine (nothing to start) and for
 * tests. It keeps the encoded bytes, as Redis would, so a read is a copy, never the live game.
 */
export class MemorySnapshotStore implements SnapshotStore {
  readonly kind = "memory";
  private readonly origins = new Map<string, Uint8Array>();
  private readonly snapshots = new Map<string, Uint8Array>();
  private readonly beats = new Map<string, { beat: EngineBeat; untilMs: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  async writeOrigin(origin: GameOrigin): Promise<void> {
    this.origins.set(origin.gameId, toBinary(GameOriginSchema, origin));
  }

  async writeSnapshots(snapshots: readonly GameSnapshot[]): Promise<void> {
    for (const s of snapshots) this.snapshots.set(s.gameId, toBinary(GameSnapshotSchema, s));
  }

  async read(gameId: string): Promise<StoredGame | undefined> {
    const origin = this.origins.get(gameId);
    const snapshot = this.snapshots.get(gameId);
    if (!origin || !snapshot) return undefined;
    return { origin: fromBinary(GameOriginSchema, origin), snapshot: fromBinary(GameSnapshotSchema, snapshot) };
  }

  async remove(gameIds: readonly string[]): Promise<void> {
    for (const id of gameIds) {
      this.origins.delete(id);
      this.snapshots.delete(id);
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
