import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { ENGINE_SHARDS_ENV, EngineShardsConfigError, engineShardsFromEnv } from "../src/index.js";

describe("FLAPLAB_ENGINE_SHARDS", () => {
  it("is off (0) unless set, a whole number up to 64, or one per core with auto", () => {
    expect(engineShardsFromEnv({})).toBe(0);
    expect(engineShardsFromEnv({ [ENGINE_SHARDS_ENV]: " " })).toBe(0);
    expect(engineShardsFromEnv({ [ENGINE_SHARDS_ENV]: "0" })).toBe(0);
    expect(engineShardsFromEnv({ [ENGINE_SHARDS_ENV]: "3" })).toBe(3);
    expect(engineShardsFromEnv({ [ENGINE_SHARDS_ENV]: "auto" })).toBe(availableParallelism());
  });

  it("refuses anything else with the variable named", () => {
    for (const bad of ["-1", "65", "2.5", "two", "1e1"]) {
      expect(() => engineShardsFromEnv({ [ENGINE_SHARDS_ENV]: bad })).toThrow(EngineShardsConfigError);
      expect(() => engineShardsFromEnv({ [ENGINE_SHARDS_ENV]: bad })).toThrow(`FLAPLAB_ENGINE_SHARDS must be 0…64 or "auto", got "${bad}"`);
    }
  });
});
