// Starts the Vite dev server for the web client.
// Usage: tsx scripts/serve.ts [--port 5173] [--config-json '<json>']
// Prints one JSON line {"event":"web-listening","url":...} on stdout when ready; SIGTERM/SIGINT close it.
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createServer } from "vite";
import { parseConfigText } from "../src/config.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "5173" },
      "config-json": { type: "string" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0…65535, got ${values.port}`);
  const configJson = values["config-json"];
  if (configJson !== undefined) {
    parseConfigText(configJson); // fail fast with a clear message
    process.env["FLAPLAB_WEB_CONFIG"] = configJson;
  }

  const server = await createServer({
    root,
    configFile: resolve(root, "vite.config.ts"),
    logLevel: "warn",
    clearScreen: false,
    server: { host: "127.0.0.1", port, strictPort: true },
  });
  await server.listen();
  const address = server.httpServer?.address();
  const boundPort = address && typeof address === "object" ? address.port : port;
  process.stdout.write(`${JSON.stringify({ event: "web-listening", url: `http://127.0.0.1:${boundPort}/` })}\n`);

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
