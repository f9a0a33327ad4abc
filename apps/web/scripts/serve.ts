// Serves the web client: the Vite dev server, or with --build a production build of it (built into
// a temporary folder, served by Vite's preview server, removed on exit). A build does not reload
// when source files change, and measures the code players get; measurement runs use it.
// Usage: tsx scripts/serve.ts [--port 5173] [--config-json '<json>'] [--build]
// Prints one JSON line {"event":"web-listening","url":...} on stdout when ready; SIGTERM/SIGINT close it.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { build, createServer, preview } from "vite";
import { parseConfigText } from "../src/config.js";
import { WEB_CONFIG } from "../src/settings.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "5173" },
      "config-json": { type: "string" },
      build: { type: "boolean", default: false },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0…65535, got ${values.port}`);
  const configJson = values["config-json"];
  if (configJson !== undefined) {
    parseConfigText(configJson); // fail fast with a clear message
    process.env[WEB_CONFIG.name] = configJson;
  }

  const configFile = resolve(root, "vite.config.ts");
  let server: { close(): Promise<void>; address(): AddressInfo | string | null | undefined };
  if (values.build) {
    const outDir = await mkdtemp(join(tmpdir(), "flaplab-web-"));
    // Vite's own SIGTERM handler ends the process once its server is closed, so the build is
    // removed on exit, however the process gets there.
    process.on("exit", () => rmSync(outDir, { recursive: true, force: true }));
    const started = performance.now();
    await build({ root, configFile, logLevel: "warn", clearScreen: false, build: { outDir, emptyOutDir: true } });
    process.stdout.write(`${JSON.stringify({ event: "web-built", outDir, ms: Math.round(performance.now() - started) })}\n`);
    const previewServer = await preview({
      root,
      configFile,
      logLevel: "warn",
      clearScreen: false,
      build: { outDir },
      preview: { host: "127.0.0.1", port, strictPort: true },
    });
    server = { close: () => previewServer.close(), address: () => previewServer.httpServer.address() };
  } else {
    const devServer = await createServer({
      root,
      configFile,
      logLevel: "warn",
      clearScreen: false,
      server: { host: "127.0.0.1", port, strictPort: true },
    });
    await devServer.listen();
    server = { close: () => devServer.close(), address: () => devServer.httpServer?.address() };
  }
  const address = server.address();
  const boundPort = address && typeof address === "object" ? address.port : port;
  process.stdout.write(`${JSON.stringify({ event: "web-listening", url: `http://127.0.0.1:${boundPort}/`, build: values.build })}\n`);

  let closing = false;
  const close = (signal: string) => {
    if (closing) return;
    closing = true;
    server
      .close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        process.stderr.write(`web: error while closing on ${signal}: ${(err as Error).message}\n`);
        process.exit(1);
      });
  };
  process.on("SIGTERM", () => close("SIGTERM"));
  process.on("SIGINT", () => close("SIGINT"));
}

main().catch((err: unknown) => {
  process.stderr.write(`web: ${(err as Error).message}\n`);
  process.exit(1);
});
