import { spawn, type ChildProcess } from "node:child_process";
import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";

// scripts/serve.ts as `pnpm dev` starts it: the dev server, and the production build for measurements.
const SERVE = resolve(import.meta.dirname, "../scripts/serve.ts");
const CONFIG = { authUrl: "http://127.0.0.1:7999", initiatorUrl: "http://127.0.0.1:7999", scoreUrl: "http://127.0.0.1:7999", topology: "test" };

interface Event {
  event: string;
  url?: string;
  outDir?: string;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function serve(args: string[]): { child: ChildProcess; events: Event[]; listening: Promise<Event>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", SERVE, "--port", "0", "--config-json", JSON.stringify(CONFIG), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const events: Event[] = [];
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const listening = new Promise<Event>((ok, fail) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("{")) return;
      const e = JSON.parse(line) as Event;
      events.push(e);
      if (e.event === "web-listening") ok(e);
    });
    void exited.then((code) => fail(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, events, listening, exited };
}

async function checkPage(url: string): Promise<string> {
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(page.headers.get("cross-origin-opener-policy")).toBe("same-origin");
  expect(page.headers.get("cross-origin-embedder-policy")).toBe("require-corp");
  const config = await fetch(new URL("/config.json", url));
  expect(await config.json()).toMatchObject(CONFIG);
  return page.text();
}

describe("serve.ts", () => {
  it("--build serves a production build with the isolation headers and config.json, and removes it on exit", async () => {
    const s = serve(["--build"]);
    const { url } = await s.listening;
    const html = await checkPage(url!);
    // Built: hashed bundles under /assets/, no Vite client for hot reloads.
    const script = /<script type="module"[^>]*src="(\/assets\/[^"]+\.js)"/.exec(html);
    expect(script, html).not.toBeNull();
    expect(html).not.toContain("/@vite/client");
    const bundle = await fetch(new URL(script![1]!, url));
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("cross-origin-embedder-policy")).toBe("require-corp");
    const built = s.events.find((e) => e.event === "web-built");
    expect(built?.outDir).toBeTruthy();
    await access(built!.outDir!);
    s.child.kill("SIGTERM");
    // 0, or 143 when Vite's own SIGTERM handler ends the process first.
    expect([0, 143]).toContain(await s.exited);
    await expect(access(built!.outDir!)).rejects.toThrow();
  }, 120_000);

  it("without --build serves the dev server (with the Vite client)", async () => {
    const s = serve([]);
    const { url } = await s.listening;
    expect(await checkPage(url!)).toContain("/@vite/client");
    s.child.kill("SIGTERM");
    expect([0, 143]).toContain(await s.exited);
  }, 60_000);

  it("refuses a bad --config-json with a clear message", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", SERVE, "--port", "0", "--config-json", "{nope"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    expect(await new Promise((r) => child.on("exit", r))).toBe(1);
    expect(stderr).toMatch(/^web: /);
  }, 30_000);
});
