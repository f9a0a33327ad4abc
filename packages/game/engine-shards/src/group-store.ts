// The group's in-process snapshot store as a shard reaches it: over the IPC channel. A shared store
// (Redis) the shard connects to itself; the in-process one lives in the group's memory, so a
// shard's keeper writes it through the group (`store` calls, answered by `answerStoreCall`).
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type GameOrigin, GameOriginSchema, type GameSnapshot, GameSnapshotSchema } from "@flaplab/contracts/engine/v1/snapshot_pb";
import type { EngineBeat, SnapshotStore, StoredGame } from "@flaplab/snapshots";
import type { StoreCall, StoreResult } from "./protocol.js";

/** A `StoreCall` without its id (the store numbers its calls). */
type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;
type StoreRequest = WithoutId<StoreCall>;

/**
 * The shard's side: the group's store, for the shard's SnapshotKeeper. Writes (origins, snapshot
 * batches, removals) go to the group as `store` calls and resolve with its answer; the rest of a
 * store's calls are not a shard's to make (the group resumes games and beats the engine's
 * heartbeat) and are refused. Once the group is gone (`disconnected`), every call fails at once.
 */
export class GroupSnapshotStore implements SnapshotStore {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (lost: string[]) => void; reject: (err: Error) => void }>();
  private gone = false;

  /** The group's in-process store, seen from a shard. */
  readonly kind = "group";

  /** `send`: sends a call to the group; false when it cannot (the channel is closed). */
  constructor(private readonly send: (call: StoreCall) => boolean) {}

  /** Calls sent and not answered yet. */
  get waiting(): number {
    return this.pending.size;
  }

  async writeOrigin(origin: GameOrigin): Promise<void> {
    await this.call({ type: "store", method: "writeOrigin", origin: toBinary(GameOriginSchema, origin) });
  }

  writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]> {
    if (snapshots.length === 0) return Promise.resolve([]);
    return this.call({ type: "store", method: "writeSnapshots", engine, snapshots: snapshots.map((s) => toBinary(GameSnapshotSchema, s)) });
  }

  async remove(gameIds: readonly string[]): Promise<void> {
    await this.call({ type: "store", method: "remove", gameIds: [...gameIds] });
  }

  claim(): Promise<void> {
    return notAShards("claim games");
  }

  read(): Promise<StoredGame | undefined> {
    return notAShards("read games");
  }

  heartbeat(): Promise<void> {
    return notAShards("beat the engine's heartbeat");
  }

  retire(): Promise<void> {
    return notAShards("retire the engine");
  }

  liveEngines(): Promise<EngineBeat[]> {
    return notAShards("read heartbeats");
  }

  async close(): Promise<void> {
    this.disconnected();
  }

  /** The group's answer to call `result.id`. False for an id nobody waits for. */
  settle(result: StoreResult): boolean {
    const waiting = this.pending.get(result.id);
    if (!waiting) return false;
    this.pending.delete(result.id);
    if (result.error !== undefined) waiting.reject(new Error(`the group's snapshot store failed: ${result.error}`));
    else waiting.resolve([...(result.lost ?? [])]);
    return true;
  }

  /** The group is gone: the calls waiting for it fail, and so does every later one. */
  disconnected(): void {
    this.gone = true;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiting) w.reject(groupGone());
  }

  private call(request: StoreRequest): Promise<string[]> {
    if (this.gone) return Promise.reject(groupGone());
    const id = this.nextId++;
    return new Promise<string[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (!this.send({ ...request, id } as StoreCall)) {
        this.pending.delete(id);
        reject(groupGone());
      }
    });
  }
}

/**
 * The group's side: makes a shard's `store` call on the group's store and returns the answer to
 * send back (an error as its message: a failed write is the shard keeper's to log, as its own).
 */
export async function answerStoreCall(store: SnapshotStore, call: StoreCall): Promise<StoreResult> {
  try {
    switch (call.method) {
      case "writeOrigin":
        await store.writeOrigin(fromBinary(GameOriginSchema, call.origin));
        return { type: "store-result", id: call.id };
      case "writeSnapshots": {
        const lost = await store.writeSnapshots(
          call.engine,
          call.snapshots.map((bytes) => fromBinary(GameSnapshotSchema, bytes)),
        );
        return { type: "store-result", id: call.id, lost };
      }
      case "remove":
        await store.remove(call.gameIds);
        return { type: "store-result", id: call.id };
      default:
        return { type: "store-result", id: (call as { id: number }).id, error: `unknown store call ${(call as { method: unknown }).method}` };
    }
  } catch (err) {
    return { type: "store-result", id: call.id, error: err instanceof Error ? err.message : String(err) };
  }
}

function groupGone(): Error {
  return new Error("the engine shard's group is gone: its snapshot store cannot be reached");
}

function notAShards(what: string): Promise<never> {
  return Promise.reject(new Error(`an engine shard does not ${what}: its group does`));
}
