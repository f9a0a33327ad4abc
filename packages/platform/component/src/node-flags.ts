import type { ComponentName } from "./definition.js";

/**
 * The Node (V8) flags of a process that hosts the game engine: a young generation of at most
 * 2 MiB per semi-space. The engine ticks thousands of games on 33 ms deadlines, and every
 * young-generation collection stops all of them. V8's default lets that space grow to 16 MiB
 * (Node 20), and then each collection at 2,000 games pauses 0.8–1.9 ms, with more medium-lived
 * objects surviving it; capped at 2 MiB it pauses 0.4–0.6 ms, twice as often, for no more CPU
 * per frame (`pnpm bench --only engine`, the GC goal's rows).
 */
export const ENGINE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2"];

/**
 * The Node flags a process hosting `components` starts with (on its command line, or in
 * `NODE_OPTIONS` in a container): `ENGINE_NODE_FLAGS` when the engine is among them, none otherwise.
 */
export function nodeFlagsFor(components: readonly ComponentName[]): readonly string[] {
  return components.includes("engine") ? ENGINE_NODE_FLAGS : [];
}
