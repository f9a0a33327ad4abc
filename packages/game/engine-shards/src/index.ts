export { ENGINE_SHARDS_ENV, EngineShardsConfigError, engineShardsFromEnv, startEngineShards } from "./pool.js";
export type { EngineShards, EngineShardsOptions, ShardStats } from "./pool.js";
export type { FromShard, ShardSample, ToShard } from "./protocol.js";
export { LATE_TICK_US } from "./protocol.js";
