import { chromium, type BrowserContext, type Page } from "playwright-core";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Chromium flags: headless, and no traffic beyond loopback. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
];

/**
 * After a discrete input (a key press), Chromium holds the page's deferrable tasks, network
 * messages among them, until the next frame has been painted (feature
 * `DeferRendererTasksAfterInput`). Every input-to-effect and input-to-audio sample then carries
 * up to one display frame (0–16.7 ms) of delay that has nothing to do with the deployment. The
 * runner turns the deferral off unless asked to keep Chromium's stock scheduling.
 */
export const NO_INPUT_DEFERRAL_ARG = "--disable-features=DeferRendererTasksAfterInput";

export interface Browser {
  readonly context: BrowserContext;
  readonly version: string;
  /** The command-line flags it was started with. */
  readonly args: readonly string[];
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** The deployment's host: name resolution is allowed for it when it is not loopback. */
  readonly deploymentHost?: string;
  /** Keep Chromium's task deferral after input (see NO_INPUT_DEFERRAL_ARG). Default false. */
  readonly stockScheduling?: boolean;
}

/** The flags `launch` passes for `opts`. */
export function chromiumArgs(opts: LaunchOptions = {}): string[] {
  const host = opts.deploymentHost;
  const args =
    host && !/^(127\.|localhost$|\[::1\])/.test(host)
      ? CHROMIUM_ARGS.map((a) => (a.startsWith("--host-resolver-rules=") ? `${a}, EXCLUDE ${host}, EXCLUDE *.${host.split(".").slice(1).join(".")}` : a))
      : [...CHROMIUM_ARGS];
  if (!opts.stockScheduling) args.push(NO_INPUT_DEFERRAL_ARG);
  return args;
}

/**
 * A fresh browser profile (so storage is clear) for one run. Name resolution stays on loopback,
 * plus the deployment's own host when it is elsewhere (a cloud stage).
 */
export async function launch(executablePath: string, opts: LaunchOptions = {}): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), "flaplab-replay-"));
  const args = chromiumArgs(opts);
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, ignoreHTTPSErrors: true, args });
  const version = context.browser()?.version() ?? (await versionOf(context));
  return {
    context,
    version,
    args,
    async close() {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

async function versionOf(context: BrowserContext): Promise<string> {
  const page = context.pages()[0] ?? (await context.newPage());
  return page.evaluate(() => (globalThis as unknown as PageGlobals).navigator.userAgent).catch(() => "unknown");
}

/** Epoch ms on this machine's clock; the page's `performance.timeOrigin + performance.now()` matches it. */
export function nowEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Waits until `epochMs`: sleeps, then spins the last 2 ms. */
export async function waitUntil(epochMs: number): Promise<void> {
  const early = epochMs - nowEpochMs() - 2;
  if (early > 0) await new Promise((r) => setTimeout(r, early));
  while (nowEpochMs() < epochMs) {
    // spin: setTimeout alone is ±1 ms
  }
}

/** The page's automation state. */
export async function pageState(page: Page): Promise<string> {
  return page.evaluate(() => (globalThis as unknown as PageGlobals).flaplab?.state ?? "loading");
}

/** What the runner reads in the page (these callbacks run inside Chromium). */
export interface PageGlobals {
  flaplab?: {
    state: string;
    log(): Array<{ type: string; seq?: number; time: number; note?: string }>;
    lastGame: { gameId: string; seed: string; score: number; ticks: number; recorded: boolean; error: string | null } | null;
    summary(): Record<string, unknown> | null;
    csv(): string;
    tick(): number | null;
    pressAtTicks(ticks: readonly number[]): void;
  };
  navigator: { userAgent: string };
  document: { querySelector(selector: string): { textContent: string | null } | null };
}
