import { describe, expect, it } from "vitest";
import { ThrottledWarning } from "../src/throttled-log.js";

describe("ThrottledWarning", () => {
  it("logs the first at once, then at most one line per interval with the count of those not logged", () => {
    let now = 1000;
    const lines: object[] = [];
    const warning = new ThrottledWarning({ warn: (obj) => void lines.push(obj) }, () => now, 5000, "alsoRefused");
    warning.warn({ reason: "a" }, "refused");
    warning.warn({ reason: "b" }, "refused");
    now += 4999;
    warning.warn({ reason: "c" }, "refused");
    expect(lines).toEqual([{ reason: "a", alsoRefused: 0 }]);
    now += 1;
    warning.warn({ reason: "d" }, "refused");
    expect(lines).toEqual([
      { reason: "a", alsoRefused: 0 },
      { reason: "d", alsoRefused: 2 },
    ]);
  });

  it("counts without a logger", () => {
    const warning = new ThrottledWarning(undefined, () => 0, 5000, "alsoFailed");
    expect(() => warning.warn({}, "failed")).not.toThrow();
  });
});
