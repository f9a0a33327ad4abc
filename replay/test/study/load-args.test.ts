import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTrace, ReplayUsageError } from "../../src/run/options.js";
import { expectedPlayMs, levelFolder, LOAD_RAMP_MS, loadDurationMs } from "../../src/study/load-levels.js";
import { parseStudyArgs } from "../../src/study/study.js";

const REPO = resolve(import.meta.dirname, "../../..");
const study = (...args: string[]) => parseStudyArgs(args, REPO, REPO);

describe("pnpm study --load", () => {
  it("takes whole numbers of bot players, strictly increasing, with or without level 0", () => {
    expect(study("--load", "0,100,400")).toMatchObject({ loadLevels: [0, 100, 400], loadWorkers: 1 });
    expect(study("--load", " 0, 20 ,60")).toMatchObject({ loadLevels: [0, 20, 60] });
    expect(study("--load", "50")).toMatchObject({ loadLevels: [50] });
    expect(study("--load", "0,4", "--load-workers", "2")).toMatchObject({ loadLevels: [0, 4], loadWorkers: 2 });
  });

  it("has no load dimension by default: the study as it was", () => {
    expect(study()).toMatchObject({ loadLevels: [], loadWorkers: 1 });
  });

  it.each([
    ["100,50", /strictly increasing.*100 then 50/],
    ["0,0", /strictly increasing.*0 then 0/],
    ["-5", /whole numbers of bot players ≥ 0.*"-5"/],
    ["1.5", /whole numbers.*"1.5"/],
    ["ten", /whole numbers.*"ten"/],
    ["0,,4", /separated by commas/],
    ["", /separated by commas/],
    ["0,20000", /up to 10000/],
  ])("refuses --load %j with a clear error", (text, message) => {
    expect(() => study(`--load=${text}`)).toThrow(ReplayUsageError);
    expect(() => study(`--load=${text}`)).toThrow(message);
  });

  it("refuses --load-workers without --load, or out of range, and --load with a duet or a fault", () => {
    expect(() => study("--load-workers", "2")).toThrow(/--load-workers goes with --load/);
    expect(() => study("--load", "0,4", "--load-workers", "0")).toThrow(/whole number from 1 to 64, got "0"/);
    expect(() => study("--load", "0,4", "--load-workers", "x")).toThrow(/whole number from 1 to 64/);
    expect(() => study("--load", "0,4", "--duet", "monolith,microservices")).toThrow(/--load cannot go with --duet/);
    expect(() => study("--load", "0,4", "--fault", "engine-kill@200")).toThrow(/--load cannot go with --fault/);
  });

  it("files level 0 under the plain name and other levels as <deployment>@<level>", () => {
    expect(levelFolder("monolith", 0)).toBe("monolith");
    expect(levelFolder("microservices", 100)).toBe("microservices@100");
    expect(levelFolder("monolith+websocket", 4)).toBe("monolith+websocket@4");
  });

  it("gives the bots a duration that outlasts the Chromium runs it expects", async () => {
    const easy = await loadTrace(resolve(REPO, "replay/traces/6977347407732442987.csv"));
    const expected = expectedPlayMs([easy], 2);
    // The easy game's last press is about 12 s in: two runs take well over 24 s and under a minute.
    expect(expected).toBeGreaterThan(24_000);
    expect(expected).toBeLessThan(60_000);
    expect(loadDurationMs(expected)).toBeGreaterThan(LOAD_RAMP_MS + expected);
  });
});

describe("pnpm study --warmup", () => {
  it("plays one unrecorded game per deployment by default; any number from 0 to 10", () => {
    expect(study()).toMatchObject({ warmup: 1 });
    expect(study("--warmup", "0")).toMatchObject({ warmup: 0 });
    expect(study("--warmup", "3")).toMatchObject({ warmup: 3 });
  });

  it.each(["-1", "11", "1.5", "two", ""])("refuses --warmup %j with a clear error", (text) => {
    expect(() => study(`--warmup=${text}`)).toThrow(ReplayUsageError);
    expect(() => study(`--warmup=${text}`)).toThrow(/--warmup must be a whole number of games from 0 to 10/);
  });
});
