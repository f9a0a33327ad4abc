import { describe, expect, it } from "vitest";
import { AuthConfigError, authTokenTtlFromEnv } from "../src/index.js";

describe("authTokenTtlFromEnv", () => {
  it("reads FLAPLAB_AUTH_TOKEN_TTL_S in whole seconds, and nothing when unset or blank", () => {
    expect(authTokenTtlFromEnv({ FLAPLAB_AUTH_TOKEN_TTL_S: "2" })).toBe(2);
    expect(authTokenTtlFromEnv({ FLAPLAB_AUTH_TOKEN_TTL_S: " 900 " })).toBe(900);
    expect(authTokenTtlFromEnv({})).toBeUndefined();
    expect(authTokenTtlFromEnv({ FLAPLAB_AUTH_TOKEN_TTL_S: "" })).toBeUndefined();
  });

  it("refuses a value that is not a whole number of seconds ≥ 1, naming the variable", () => {
    for (const raw of ["0", "-5", "1.5", "1e3", "an hour"]) {
      expect(() => authTokenTtlFromEnv({ FLAPLAB_AUTH_TOKEN_TTL_S: raw })).toThrow(AuthConfigError);
      expect(() => authTokenTtlFromEnv({ FLAPLAB_AUTH_TOKEN_TTL_S: raw })).toThrow(/FLAPLAB_AUTH_TOKEN_TTL_S/);
    }
  });
});
