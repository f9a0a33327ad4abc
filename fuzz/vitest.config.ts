import { defineConfig } from "vitest/config";

// The sample starts a real monolith in a child process and attacks it: one file at a time.
export default defineConfig({
  test: { fileParallelism: false, testTimeout: 120_000, hookTimeout: 120_000 },
});
