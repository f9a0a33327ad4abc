import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type World, WorldSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";

export const EASY_SEED = 6977347407732442987n;
export const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];
const EASY_WORLD = fileURLToPath(new URL(`../../../../test-data/flappygo/worlds/${EASY_SEED}.json`, import.meta.url));

/** FlappyGo's own world for the easy seed (test-data/flappygo), as a World message. */
export function easyWorld(): World {
  const go = JSON.parse(readFileSync(EASY_WORLD, "utf8")) as {
    PipeSpacing: number;
    PipeSpecs: { GapStart: number; GapHeight: number }[];
  };
  return create(WorldSchema, {
    seed: EASY_SEED,
    viewport: { width: 480, height: 640 },
    pipeSpacing: go.PipeSpacing,
    pipes: go.PipeSpecs.map((p) => ({ gapStart: p.GapStart, gapHeight: p.GapHeight })),
  });
}

const OPEN_PIPE = { gapStart: -1e9, gapHeight: 2e9 };

/**
 * A 480×640 world of 100 pipes (spacing 191: 5 in view) whose gaps the bird never leaves,
 * with `patch` applied.
 */
export function openWorld(patch: Omit<MessageInitShape<typeof WorldSchema>, "$typeName"> = {}): World {
  return create(WorldSchema, {
    seed: 1n,
    viewport: { width: 480, height: 640 },
    pipeSpacing: 191,
    pipes: Array.from({ length: 100 }, () => OPEN_PIPE),
    ...patch,
  });
}

/** A world whose first pipe no bird can pass. */
export function deadlyWorld(): World {
  return openWorld({ pipes: [{ gapStart: 1e6, gapHeight: 1 }, ...Array.from({ length: 99 }, () => OPEN_PIPE)] });
}

/** A gap the height of the 640 px viewport: the bird passes it anywhere on screen. */
const FULL_GAP = { gapStart: 0, gapHeight: 640 };

/**
 * A 480×640 world of 100 pipes (spacing 191: 5 in view) in the shape the world generator makes
 * (every gap inside the viewport), so StartGame accepts it; each gap is the whole viewport.
 */
export function fairWorld(patch: Omit<MessageInitShape<typeof WorldSchema>, "$typeName"> = {}): World {
  return openWorld({ pipes: Array.from({ length: 100 }, () => FULL_GAP), ...patch });
}

/** A world StartGame accepts whose first pipe (a 1 px gap at the top) no bird can pass. */
export function fairDeadlyWorld(): World {
  return fairWorld({ pipes: [{ gapStart: 0, gapHeight: 1 }, ...Array.from({ length: 99 }, () => FULL_GAP)] });
}
