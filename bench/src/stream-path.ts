/** The engine's game stream path, as apps/server mounts it. */
export const ENGINE_PATH = "/engine/v1/game";
