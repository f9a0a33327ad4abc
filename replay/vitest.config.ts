import { defineConfig } from "vitest/config";

// These suites start whole deployments and real Chromium: one file at a time, so that timing-sensitive
// games are not starved of CPU by each other on small machines.
export default defineConfig({
  test: { fileParallelism: false, testTimeout: 120_000, hookTimeout: 120_000 },
});
