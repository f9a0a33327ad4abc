import { describe, expect, it } from "vitest";
import {
  choice,
  choiceOf,
  defaultsOf,
  isNameOf,
  minimumsOf,
  namesOf,
  nameFor,
  readText,
  readWholeNumber,
  readWholeNumbers,
  SettingError,
  text,
  valueText,
  wholeNumber,
  wholeNumberOf,
} from "../src/index.js";

class LimitError extends Error {}

const base = { description: "d", readBy: "test" };
const LIMITS = {
  maxGames: wholeNumber({ ...base, name: "FLAPLAB_TEST_MAX_GAMES", default: 100, min: 1 }),
  backlog: wholeNumber({ ...base, name: "FLAPLAB_TEST_BACKLOG", default: 4, min: 0 }),
};
const CLOCK = choice({ ...base, name: "FLAPLAB_TEST_CLOCK", choices: ["precise", "timers"], default: "timers" });
const KEY = text({ ...base, name: "FLAPLAB_TEST_KEY_<NAME>", format: "PEM", defaultText: "unset" });
const read = (env: NodeJS.ProcessEnv) => readWholeNumbers(env, LIMITS, (m) => new LimitError(m));

describe("whole numbers", () => {
  it("reads the set variables and leaves unset and blank ones out", () => {
    expect(read({ FLAPLAB_TEST_MAX_GAMES: " 250 ", FLAPLAB_TEST_BACKLOG: "" })).toEqual({ maxGames: 250 });
    expect(read({ FLAPLAB_TEST_BACKLOG: "0" })).toEqual({ backlog: 0 });
    expect(read({})).toEqual({});
  });

  it.each(["-1", "1.5", "1e3", "ten", "0x10", "99999999999999999999"])("refuses %j with the caller's error naming the variable", (raw) => {
    expect(() => read({ FLAPLAB_TEST_MAX_GAMES: raw })).toThrow(LimitError);
    expect(() => read({ FLAPLAB_TEST_MAX_GAMES: raw })).toThrow(`FLAPLAB_TEST_MAX_GAMES must be a whole number ≥ 1, got "${raw}"`);
  });

  it("holds each variable to its own minimum", () => {
    expect(() => read({ FLAPLAB_TEST_MAX_GAMES: "0" })).toThrow("≥ 1");
    expect(read({ FLAPLAB_TEST_BACKLOG: "0" })).toEqual({ backlog: 0 });
  });

  it("falls back to the declared default, and throws a SettingError without an error of the caller's", () => {
    expect(wholeNumberOf({}, LIMITS.maxGames)).toBe(100);
    expect(wholeNumberOf({ FLAPLAB_TEST_MAX_GAMES: "7" }, LIMITS.maxGames)).toBe(7);
    expect(readWholeNumber({ FLAPLAB_TEST_MAX_GAMES: "  " }, LIMITS.maxGames)).toBeUndefined();
    expect(() => wholeNumberOf({ FLAPLAB_TEST_MAX_GAMES: "many" }, LIMITS.maxGames)).toThrow(SettingError);
  });

  it("gives the defaults, minimums and names by key", () => {
    expect(defaultsOf(LIMITS)).toEqual({ maxGames: 100, backlog: 4 });
    expect(minimumsOf(LIMITS)).toEqual({ maxGames: 1, backlog: 0 });
    expect(namesOf(LIMITS)).toEqual({ maxGames: "FLAPLAB_TEST_MAX_GAMES", backlog: "FLAPLAB_TEST_BACKLOG" });
  });
});

describe("choices", () => {
  it("reads a choice, trimmed, with the default for unset or blank", () => {
    expect(choiceOf({}, CLOCK)).toBe("timers");
    expect(choiceOf({ FLAPLAB_TEST_CLOCK: " " }, CLOCK)).toBe("timers");
    expect(choiceOf({ FLAPLAB_TEST_CLOCK: " precise " }, CLOCK)).toBe("precise");
  });

  it("refuses any other word, naming the variable and the choices", () => {
    expect(() => choiceOf({ FLAPLAB_TEST_CLOCK: "fast" }, CLOCK, (m) => new RangeError(m))).toThrow(RangeError);
    expect(() => choiceOf({ FLAPLAB_TEST_CLOCK: "fast" }, CLOCK)).toThrow('FLAPLAB_TEST_CLOCK must be "precise" or "timers", got "fast"');
  });
});

describe("text and names", () => {
  it("reads text as set, untrimmed, and fills in a <NAME> part", () => {
    expect(readText({ FLAPLAB_TEST_KEY_ENGINE: " pem " }, KEY, "engine")).toBe(" pem ");
    expect(readText({}, KEY, "engine")).toBeUndefined();
    expect(nameFor(KEY, "engine")).toBe("FLAPLAB_TEST_KEY_ENGINE");
    expect(() => nameFor(CLOCK, "engine")).toThrow("has no <NAME> part");
  });

  it("tells a variable of a <NAME> setting from others", () => {
    expect(isNameOf(KEY, "FLAPLAB_TEST_KEY_MUSIC")).toBe(true);
    expect(isNameOf(KEY, "FLAPLAB_TEST_KEY_")).toBe(false);
    expect(isNameOf(KEY, "FLAPLAB_TEST_OTHER")).toBe(false);
    expect(isNameOf(CLOCK, "FLAPLAB_TEST_CLOCK")).toBe(true);
  });

  it("says what a value looks like", () => {
    expect(valueText(LIMITS.backlog)).toBe("whole number ≥ 0");
    expect(valueText(CLOCK)).toBe("`precise` or `timers`");
    expect(valueText(KEY)).toBe("PEM");
    expect(LIMITS.maxGames.defaultText).toBe("100");
    expect(CLOCK.defaultText).toBe("`timers`");
  });
});
