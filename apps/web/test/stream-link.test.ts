import { describe, expect, it } from "vitest";
import { linkFromUrl } from "../src/stream-link.js";

describe("stream link from the page URL", () => {
  it("reads link=webtransport and link=websocket, and nothing when absent", () => {
    expect(linkFromUrl("?link=websocket")).toBe("websocket");
    expect(linkFromUrl("?seed=5&link=webtransport")).toBe("webtransport");
    expect(linkFromUrl("?seed=5")).toBeUndefined();
  });

  it("refuses an unknown link with the ones it knows", () => {
    expect(() => linkFromUrl("?link=quic")).toThrow('unknown stream link "quic" in the page URL: use link=webtransport or link=websocket');
  });
});
