import { describe, expect, it } from "vitest";
import { chromiumArgs, NO_INPUT_DEFERRAL_ARG } from "../../src/run/play.js";
import { parseReplayArgs } from "../../src/run/options.js";
import { REPO } from "./free-topology.js";

describe("chromiumArgs", () => {
  it("turns off Chromium's task deferral after input unless stock scheduling is asked for", () => {
    expect(chromiumArgs()).toContain(NO_INPUT_DEFERRAL_ARG);
    expect(chromiumArgs({ stockScheduling: true })).not.toContain(NO_INPUT_DEFERRAL_ARG);
    expect(chromiumArgs({ stockScheduling: true })).toContain("--headless");
  });

  it("keeps name resolution on loopback, plus a remote deployment's own domain", () => {
    const rules = (args: string[]) => args.find((a) => a.startsWith("--host-resolver-rules="));
    expect(rules(chromiumArgs({ deploymentHost: "127.0.0.1" }))).toBe("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost");
    expect(rules(chromiumArgs({ deploymentHost: "web.flaplab.example" }))).toBe(
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE web.flaplab.example, EXCLUDE *.flaplab.example",
    );
  });
});

describe("--stock-scheduling", () => {
  const base = ["--url", "http://127.0.0.1:5173/", "--trace", "replay/traces/6977347407732442987.csv", "--out", "/tmp/unused", "--chromium", "/bin/sh"];
  it("is off by default and on when given", async () => {
    expect((await parseReplayArgs(base, REPO)).stockScheduling).toBe(false);
    expect((await parseReplayArgs([...base, "--stock-scheduling"], REPO)).stockScheduling).toBe(true);
  });
});

describe("--link", () => {
  const base = ["--url", "http://127.0.0.1:5173/", "--trace", "replay/traces/6977347407732442987.csv", "--out", "/tmp/unused", "--chromium", "/bin/sh"];
  it("is webtransport by default, websocket when asked, and refuses another link by name", async () => {
    expect((await parseReplayArgs(base, REPO)).link).toBe("webtransport");
    expect((await parseReplayArgs([...base, "--link", "websocket"], REPO)).link).toBe("websocket");
    await expect(parseReplayArgs([...base, "--link", "quic"], REPO)).rejects.toThrow('--link must be webtransport or websocket, got "quic"');
  });
});
