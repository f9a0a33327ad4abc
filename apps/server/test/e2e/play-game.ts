import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { PNG } from "pngjs";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { startDeployment } from "@flaplab/deployment";
import { parseTrace, replayFlapOffsetsMs, replayFlapTicks } from "@flaplab/input-traces";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, topologyOnFreePorts } from "../helpers.js";
import { launchBrowser } from "./browser.js";

// A person's game, in real Chromium: register, start, press Space at the easy trace's times,
// reach game over, and find the run on the scoreboard. `describePlaying` plays it against one
// topology, started as `pnpm dev` starts it, over each stream link it is given, each in a fresh
// browser (a new player: the page keeps a session in its profile).
const SCREENSHOTS = join(REPO, "test-results", "e2e");
const EASY_SEED = "6977347407732442987";

export type Link = "webtransport" | "websocket";

/** Counts pixels of `rgb` (within ±tolerance per channel) in a PNG. */
function countColour(png: PNG, rgb: [number, number, number], tolerance = 6): number {
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    if (
      Math.abs(png.data[i]! - rgb[0]) <= tolerance &&
      Math.abs(png.data[i + 1]! - rgb[1]) <= tolerance &&
      Math.abs(png.data[i + 2]! - rgb[2]) <= tolerance
    ) n++;
  }
  return n;
}

const hex = (h: string): [number, number, number] => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];

/** What `describePlaying` plays besides one game per link. */
export interface PlayingOptions {
  /**
   * A game the page plays itself on the tick clock (`flaplab.pressAtTicks`, as the replay runner's
   * fault runs do), with the automation API's events, `tick()`, then log out and in again.
   */
  readonly automation?: boolean;
}

export function describePlaying(topology: string, links: readonly Link[], options: PlayingOptions = {}): void {
  describe(`playing in Chromium [${topology}]`, () => {
    const stops: Array<() => Promise<void>> = [];
    let addresses: Record<string, string>;

    beforeAll(async () => {
      const topo = await topologyOnFreePorts(topology);
      const deployment = await startDeployment(topo.file, { dataDir: join(topo.dir, "data") });
      stops.push(async () => {
        await deployment.stop();
        await rm(topo.dir, { recursive: true, force: true });
      });
      await deployment.ready;
      addresses = topo.addresses;
    }, 90_000);

    afterAll(async () => {
      for (const stop of stops.reverse()) await stop();
    });

    for (const link of links) {
      it(`over ${link}: logs in, plays the easy trace by pressing Space, reaches game over, and the run is stored`, async () => {
        const browser = await launchBrowser(process.env["FLAPLAB_CHROMIUM"] ?? "/usr/bin/chromium");
        stops.push(() => browser.close());
        const page = await browser.context.newPage();
        const consoleErrors: string[] = [];
        page.on("pageerror", (e) => consoleErrors.push(String(e)));

        await page.goto(`http://${addresses["web"]}/?seed=${EASY_SEED}${link === "websocket" ? "&link=websocket" : ""}`);
        await page.fill("#username", `player-${link}`);
        await page.fill("#password", "a long enough password");
        await page.click("#register");
        await page.waitForFunction(() => window.flaplab?.state === "ready", null, { timeout: 15_000 });

        const trace = parseTrace(await readFile(join(REPO, "replay/traces", `${EASY_SEED}.csv`), "utf8"), {
          fileName: `${EASY_SEED}.csv`,
        });
        const offsets = replayFlapOffsetsMs(trace);

        await page.keyboard.press("Space");
        await page.waitForFunction(() => window.flaplab?.state === "playing", null, { timeout: 15_000 });
        // The start press reaches the engine when its send is logged; flaps are timed from there.
        const startEpochMs = await page
          .waitForFunction(() => {
            const start = window.flaplab.log().find((r) => r.type === "input" && r.seq === 1);
            return start ? performance.timeOrigin + start.time : 0;
          })
          .then((h) => h.jsonValue());
        const now = () => performance.timeOrigin + performance.now();
        let shot: Buffer | undefined;
        for (const [i, offset] of offsets.entries()) {
          const wait = startEpochMs + offset - now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          await page.keyboard.press("Space");
          if (i === 5) {
            await mkdir(SCREENSHOTS, { recursive: true });
            shot = await page.locator("#game-canvas").screenshot({ path: join(SCREENSHOTS, `${topology}-${link}-in-progress.png`) });
          }
        }
        await page.waitForFunction(() => window.flaplab?.state === "over", null, { timeout: 20_000 });
        const last = await page.evaluate(() => window.flaplab.lastGame);
        const report = await page.evaluate(() => window.flaplab.summary());

        // The screenshot (taken at the 6th flap, mid-game) shows sky, pipes, the bird and the score.
        const png = PNG.sync.read(shot!);
        const palette = await page.evaluate(() => window.flaplabPalette);
        expect(countColour(png, hex(palette.sky))).toBeGreaterThan(20_000);
        expect(countColour(png, hex(palette.pipe))).toBeGreaterThan(2_000);
        expect(countColour(png, hex(palette.bird))).toBeGreaterThan(100);
        expect(countColour(png, hex(palette.scoreText), 2)).toBeGreaterThan(30);

        // The server-authoritative game matches the headless simulator: score 7 at tick 402.
        expect(last).toMatchObject({ seed: EASY_SEED, score: 7, ticks: 402, recorded: true, error: null });
        expect(report?.framesReceived).toBe(402); // tick frames
        expect(report?.acksReceived).toBe(14); // one input ack per flap
        expect(report?.framesUnder1kbShare).toBe(1);
        expect(report?.inputToEffectCount).toBe(15); // the start press and 14 flaps
        expect(report?.inputToNextFrameCount).toBe(15);
        expect(report?.inputToAudioCount).toBe(14); // one flap sound per flap
        expect(report?.inputToEffectMedianMs).toBeGreaterThan(0);
        expect(report?.inputToNextFrameMedianMs).toBeGreaterThan(0);
        console.log(`[${topology} ${link}] summary`, JSON.stringify(report));
        // Both streams went over the link asked for.
        const opened = await page.evaluate(() => window.flaplab.log().filter((r) => r.type === "open").map((r) => r.note ?? ""));
        expect(opened).toHaveLength(2);
        if (link === "websocket") expect(opened.sort()).toEqual(["game via plain websocket", "music via plain websocket"]);
        else expect(opened.filter((note) => note.includes("plain websocket"))).toEqual([]);

        // The run is on the scoreboard: in the page, and in the score component.
        await page.waitForFunction(() => document.querySelector("#own-runs")?.textContent?.includes("7"));
        const token = await page.evaluate(() => window.flaplab.token());
        const scoreUrl = `http://${addresses[topology === "monolith" ? "monolith" : "score"]}`;
        const score = createClient(ScoreService, createConnectTransport({ baseUrl: scoreUrl, httpVersion: "1.1" }));
        const { ownRuns, leaderboard } = await score.getScores({}, { headers: { authorization: `Bearer ${token}` } });
        expect(ownRuns.find((r) => r.gameId === last!.gameId)?.score).toBe(7);
        expect(leaderboard.some((r) => r.gameId === last!.gameId)).toBe(true);

        // Play again: a second game starts from the game-over screen.
        await page.click("#play-again");
        await page.waitForFunction(() => window.flaplab?.state === "playing" || window.flaplab?.state === "over", null, { timeout: 15_000 });
        expect(consoleErrors).toEqual([]);
        await browser.close();
      }, 120_000);
    }

    if (options.automation) {
      it("on the tick clock: flaplab.pressAtTicks plays the easy trace, tick() follows the game, its events arrive, and a player logs out and in", async () => {
        const browser = await launchBrowser(process.env["FLAPLAB_CHROMIUM"] ?? "/usr/bin/chromium");
        stops.push(() => browser.close());
        const page = await browser.context.newPage();
        const consoleErrors: string[] = [];
        page.on("pageerror", (e) => consoleErrors.push(String(e)));

        await page.goto(`http://${addresses["web"]}/?seed=${EASY_SEED}`);
        await page.fill("#username", "player-ticks");
        await page.fill("#password", "a long enough password");
        await page.click("#register");
        await page.waitForFunction(() => window.flaplab?.state === "ready", null, { timeout: 15_000 });
        // Every event the automation API dispatches from here on, by name and state.
        await page.evaluate(() => {
          const seen: string[] = [];
          (window as unknown as { seen: string[] }).seen = seen;
          window.flaplab.events.addEventListener("flaplab:state", (e) => seen.push(`state:${(e as CustomEvent<{ state: string }>).detail.state}`));
          window.flaplab.events.addEventListener("flaplab:gameover", (e) => seen.push(`gameover:${(e as CustomEvent<{ lastGame: { score: number } }>).detail.lastGame.score}`));
        });

        const trace = parseTrace(await readFile(join(REPO, "replay/traces", `${EASY_SEED}.csv`), "utf8"), { fileName: `${EASY_SEED}.csv` });
        await page.evaluate((ticks) => window.flaplab.pressAtTicks(ticks), replayFlapTicks(trace));
        expect(await page.evaluate(() => window.flaplab.tick())).toBeNull();
        await page.keyboard.press("Space");
        await page.waitForFunction(() => (window.flaplab.tick() ?? 0) >= 100, null, { timeout: 20_000, polling: 10 });
        await page.waitForFunction(() => window.flaplab.state === "over", null, { timeout: 30_000 });
        expect(await page.evaluate(() => window.flaplab.lastGame)).toMatchObject({ seed: EASY_SEED, score: 7, ticks: 402, error: null });
        expect(await page.evaluate(() => window.flaplab.tick())).toBeNull();
        // The page pressed 14 times itself, each once: one ack per flap, one flap sound per flap.
        const report = await page.evaluate(() => window.flaplab.summary());
        expect([report?.acksReceived, report?.inputToAudioCount, report?.inputToEffectCount]).toEqual([14, 14, 15]);
        await page.waitForFunction(() => document.querySelector("#own-runs")?.textContent?.includes("7"));

        await page.click("#logout");
        expect(await page.evaluate(() => [window.flaplab.state, window.flaplab.token(), document.querySelector("#own-runs")?.textContent])).toEqual(["login", null, ""]);
        await page.fill("#username", "player-ticks");
        await page.fill("#password", "a long enough password");
        await page.click("#login");
        await page.waitForFunction(() => window.flaplab?.state === "ready", null, { timeout: 15_000 });
        expect(await page.evaluate(() => window.flaplab.token())).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        await page.waitForFunction(() => document.querySelector("#own-runs")?.textContent?.includes("7"));
        expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual([
          "state:playing",
          "state:over",
          "gameover:7",
          "state:login",
          "state:ready",
        ]);
        expect(consoleErrors).toEqual([]);
        await browser.close();
      }, 120_000);
    }
  });
}
