import { describe, expect, it } from "vitest";
import { wholeNumbersFromEnv } from "../src/index.js";

class LimitError extends Error {}

const VARIABLES = { maxGames: "FLAPLAB_TEST_MAX_GAMES", backlog: "FLAPLAB_TEST_BACKLOG" } as const;
const minimum = (key: keyof typeof VARIABLES): number => (key === "backlog" ? 0 : 1);
const read = (env: NodeJS.ProcessEnv) => wholeNumbersFromEnv(env, VARIABLES, minimum, (m) => new LimitError(m));

describe("wholeNumbersFromEnv", () => {
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
  });
});
