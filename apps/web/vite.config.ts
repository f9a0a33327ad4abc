import type { IncomingMessage, ServerResponse } from "node:http";
import { defineConfig, type Plugin } from "vite";
import { DEFAULT_CONFIG, parseConfigText } from "./src/config.js";
import { WEB_CONFIG } from "./src/settings.js";

/** Cross-origin isolation, so that performance.now() has µs resolution (5 µs instead of 100 µs). */
const ISOLATION_HEADERS = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

/**
 * Serves `/config.json` from the environment variable FLAPLAB_WEB_CONFIG (a JSON string), or the
 * monolith's default (http://127.0.0.1:7070 for every service) when it is unset. The JSON is
 * validated when the server starts.
 */
export function configJsonPlugin(env: NodeJS.ProcessEnv = process.env): Plugin {
  const raw = env[WEB_CONFIG.name];
  const config = raw && raw.trim() !== "" ? parseConfigText(raw) : DEFAULT_CONFIG;
  const body = JSON.stringify(config);
  const handler = (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/config.json") return next();
    res.statusCode = 200;
    res.setHeader("Content-Type", "application/json");
    res.setHeader("Cache-Control", "no-store");
    for (const [k, v] of Object.entries(ISOLATION_HEADERS)) res.setHeader(k, v);
    res.end(body);
  };
  return {
    name: "flaplab-config-json",
    configureServer(server) {
      server.middlewares.use(handler);
    },
    configurePreviewServer(server) {
      server.middlewares.use(handler);
    },
  };
}

export default defineConfig({
  plugins: [configJsonPlugin()],
  server: {
    host: "127.0.0.1",
    strictPort: true,
    headers: ISOLATION_HEADERS,
  },
  preview: {
    host: "127.0.0.1",
    strictPort: true,
    headers: ISOLATION_HEADERS,
  },
  optimizeDeps: {
    // Found through a dynamic import only; listing it avoids a re-optimisation (and reload) on the first game.
    include: ["@fails-components/webtransport"],
  },
  build: {
    outDir: "dist",
    target: "es2022",
    sourcemap: true,
  },
});
