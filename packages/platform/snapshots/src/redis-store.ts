import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { GameOriginSchema, GameSnapshotSchema, type GameOrigin, type GameSnapshot } from "@flaplab/contracts/engine/v1/snapshot_pb";
import { Redis } from "ioredis";
import { type EngineBeat, SNAPSHOT_TTL_MS, type SnapshotStore, type StoredGame } from "./store.js";

export interface RedisSnapshotStoreOptions {
  /** `redis://host:port[/db]`. */
  readonly url: string;
  /** Prefix of every key (default "flaplab:"), so that deployments can share a server. */
  readonly keyPrefix?: string;
  /** How long a stored game outlives its latest write, ms (default 15 min). */
  readonly ttlMs?: number;
  /** Called when the connection fails (it reconnects by itself). */
  readonly onError?: (err: Error) => void;
}

/**
 * Snapshots in Redis (or Valkey), shared by every engine of a deployment:
 * `<prefix>origin:<game>` and `<prefix>snap:<game>` hold the encoded GameOrigin and GameSnapshot,
 * `<prefix>engine:<name>` an engine's latest heartbeat (JSON, expiring), and the set
 * `<prefix>engines` the names of engines that ever beat. A batch of snapshots is one pipeline.
 */
export class RedisSnapshotStore implements SnapshotStore {
  readonly kind = "redis";
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly url: string;
  private lastError: Error | undefined;

  constructor(options: RedisSnapshotStoreOptions) {
    this.prefix = options.keyPrefix ?? "flaplab:";
    this.ttlMs = options.ttlMs ?? SNAPSHOT_TTL_MS;
    this.redis = new Redis(options.url, {
      // A write during an outage fails at once rather than waiting in a queue: the next tick's
      // batch carries newer state anyway.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    });
    this.url = options.url;
    this.redis.on("error", (err: Error) => {
      this.lastError = err;
      options.onError?.(err);
    });
  }

  /** Connects; rejects when the server cannot be reached. */
  async connect(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (err) {
      throw new Error(`cannot reach the snapshot store at ${this.url}: ${(this.lastError ?? (err as Error)).message}`);
    }
  }

  async writeOrigin(origin: GameOrigin): Promise<void> {
    await this.redis.set(this.key("origin", origin.gameId), Buffer.from(toBinary(GameOriginSchema, origin)), "PX", this.ttlMs);
  }

  async writeSnapshots(engine: string, snapshots: readonly GameSnapshot[]): Promise<string[]> {
    if (snapshots.length === 0) return [];
    const keys: string[] = [];
    const args: Array<string | Buffer> = [engine, String(this.ttlMs)];
    for (const s of snapshots) {
      keys.push(this.key("owner", s.gameId), this.key("snap", s.gameId), this.key("origin", s.gameId));
      args.push(Buffer.from(toBinary(GameSnapshotSchema, s)));
    }
    // One script: the owner check and the writes of the whole batch in one round trip, atomically.
    const lost = (await this.redis.eval(WRITE_OWNED, keys.length, ...keys, ...args)) as number[];
    return lost.map((i) => snapshots[i - 1]!.gameId);
  }

  async claim(gameId: string, engine: string): Promise<void> {
    failed(
      await this.redis
        .pipeline()
        .set(this.key("owner", gameId), engine, "PX", this.ttlMs)
        .pexpire(this.key("origin", gameId), this.ttlMs)
        .pexpire(this.key("snap", gameId), this.ttlMs)
        .exec(),
    );
  }

  async read(gameId: string): Promise<StoredGame | undefined> {
    const [origin, snapshot] = await this.redis.mgetBuffer(this.key("origin", gameId), this.key("snap", gameId));
    if (!origin || !snapshot) return undefined;
    return { origin: fromBinary(GameOriginSchema, origin), snapshot: fromBinary(GameSnapshotSchema, snapshot) };
  }

  async remove(gameIds: readonly string[]): Promise<void> {
    if (gameIds.length === 0) return;
    await this.redis.del(...gameIds.flatMap((id) => [this.key("origin", id), this.key("snap", id), this.key("owner", id)]));
  }

  async heartbeat(beat: EngineBeat, ttlMs: number): Promise<void> {
    failed(
      await this.redis
        .pipeline()
        .set(this.key("engine", beat.engine), JSON.stringify(beat), "PX", ttlMs)
        .sadd(`${this.prefix}engines`, beat.engine)
        .exec(),
    );
  }

  async retire(engine: string): Promise<void> {
    await this.redis.del(this.key("engine", engine));
  }

  async liveEngines(): Promise<EngineBeat[]> {
    const names = await this.redis.smembers(`${this.prefix}engines`);
    if (names.length === 0) return [];
    const beats = await this.redis.mget(...names.map((n) => this.key("engine", n)));
    const live: EngineBeat[] = [];
    for (const text of beats) {
      if (text === null) continue;
      const beat = parseBeat(text);
      if (beat) live.push(beat);
    }
    return live;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private key(kind: "origin" | "snap" | "owner" | "engine", id: string): string {
    return `${this.prefix}${kind}:${id}`;
  }
}

/**
 * KEYS: owner, snapshot and origin key of each game, in threes; ARGV: the engine, the time to live
 * (ms), then each game's encoded snapshot. Writes the snapshots of the games the engine owns (or
 * nobody does: the engine takes them), moves their origin's expiry along (a game outlives its
 * latest write, not its first), and returns the 1-based positions of the others.
 */
const WRITE_OWNED = `
local lost = {}
for i = 1, #ARGV - 2 do
  local owner = redis.call('GET', KEYS[3 * i - 2])
  if owner == false or owner == ARGV[1] then
    redis.call('SET', KEYS[3 * i - 2], ARGV[1], 'PX', ARGV[2])
    redis.call('SET', KEYS[3 * i - 1], ARGV[i + 2], 'PX', ARGV[2])
    redis.call('PEXPIRE', KEYS[3 * i], ARGV[2])
  else
    lost[#lost + 1] = i
  end
end
return lost
`;

/** Throws the first error of a pipeline's replies. */
function failed(replies: Array<[Error | null, unknown]> | null): void {
  if (replies === null) throw new Error("redis pipeline was discarded");
  for (const [err] of replies) if (err) throw err;
}

function parseBeat(text: string): EngineBeat | undefined {
  try {
    const v = JSON.parse(text) as Partial<EngineBeat>;
    if (typeof v.engine !== "string" || typeof v.games !== "number" || typeof v.maxGames !== "number") return undefined;
    return { engine: v.engine, games: v.games, maxGames: v.maxGames, draining: v.draining === true };
  } catch {
    return undefined;
  }
}
