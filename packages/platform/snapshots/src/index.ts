export type { EngineBeat, SnapshotStore, StoredGame } from "./store.js";
export { SNAPSHOT_TTL_MS, takesGames } from "./store.js";
export { MemorySnapshotStore, type MemorySnapshotStoreOptions } from "./memory-store.js";
export { RedisSnapshotStore, type RedisSnapshotStoreOptions } from "./redis-store.js";
export { rendezvousRank } from "./rendezvous.js";
export { type RedisServer, type StartRedisOptions, startRedisServer } from "./redis-server.js";
export { openSnapshotStore, SNAPSHOT_STORE_ENV, SNAPSHOT_TTL_ENV, snapshotTtlFromEnv } from "./config.js";
