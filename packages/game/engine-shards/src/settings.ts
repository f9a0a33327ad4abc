import { text } from "@flaplab/settings";

/** Shard processes for the engine's WebSocket games (read by `engineShardsFromEnv`). */
export const ENGINE_SHARDS = text({
  name: "FLAPLAB_ENGINE_SHARDS",
  format: "0…64 or `auto`",
  description:
    "engine shard processes (`auto`: one per core) that play the WebSocket link's games, every core of the machine behind the group's one port; they keep their games' snapshots in the engine's store (a shard inherits `FLAPLAB_SNAPSHOT_STORE`) ([`packages/game/engine-shards/README.md`](../packages/game/engine-shards/README.md))",
  defaultText: "0",
  readBy: "engine",
});

/** Every variable the engine shards read. */
export const SETTINGS = [ENGINE_SHARDS];
