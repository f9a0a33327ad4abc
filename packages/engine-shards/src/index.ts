export { ENGINE_SHARDS_ENV, EngineShardsConfigError, engineShardsFromEnv, startEngineShards } from "./pool.js";
export type { EngineShards, EngineShardsOptions, ShardStats } from "./pool.js";
export type { FromShard, ToShard } from "./protocol.js";
