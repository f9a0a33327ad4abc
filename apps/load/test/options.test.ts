import { describe, expect, it } from "vitest";
import { LoadUsageError, parseDuration, parseLoadArgs } from "../src/options.js";
import { accountPool, intendedStarts, shareOut } from "../src/schedule.js";
import { errorReason, limitReason, outcomeReason } from "../src/reasons.js";
import { ConnectError, Code } from "@connectrpc/connect";
import { runCli } from "./monolith.js";

const URL_ARGS = ["--url", "http://127.0.0.1:7070"];

describe("arguments", () => {
  it("reads durations in ms, s and m", () => {
    expect(parseDuration("500ms", "duration")).toBe(500);
    expect(parseDuration("60s", "duration")).toBe(60_000);
    expect(parseDuration("2m", "duration")).toBe(120_000);
    expect(parseDuration("1.5s", "duration")).toBe(1500);
    expect(() => parseDuration("soon", "duration")).toThrow(/--duration must be a duration such as 60s, 2m or 500ms, got "soon"/);
  });

  it("takes the defaults a user expects", () => {
    const o = parseLoadArgs([...URL_ARGS, "--players", "20"]);
    expect(o).toMatchObject({ url: "http://127.0.0.1:7070", shape: { kind: "players", players: 20, rampMs: 5000 }, durationMs: 60_000, drainMs: 10_000, link: "websocket", bot: "autopilot", gameLengthMs: 6000, spreadAddresses: true });
    expect(o.workers).toBeGreaterThanOrEqual(1);
    const a = parseLoadArgs([...URL_ARGS, "--arrival-rate", "2.5", "--seed", "7", "--workers", "3", "--link", "webtransport", "--cert-sha256", "ab".repeat(32)]);
    expect(a).toMatchObject({ shape: { kind: "arrivals", rate: 2.5, arrivals: "poisson" }, seed: 7, workers: 3, link: "webtransport" });
    expect(a.certSha256).toHaveLength(32);
  });

  it.each([
    [[], /--url is required/],
    [["--url", "ftp://x"], /--url must be http or https/],
    [[...URL_ARGS], /give exactly one of --players N or --arrival-rate R/],
    [[...URL_ARGS, "--players", "2", "--arrival-rate", "1"], /give exactly one of/],
    [[...URL_ARGS, "--players", "0"], /--players must be a whole number from 1/],
    [[...URL_ARGS, "--players", "3", "--duration", "1h"], /--duration must be a duration/],
    [[...URL_ARGS, "--arrival-rate=-1"], /--arrival-rate must be a number of games per second above 0/],
    [[...URL_ARGS, "--arrival-rate", "0"], /--arrival-rate must be a number of games per second above 0/],
    [[...URL_ARGS, "--arrival-rate", "1", "--arrivals", "bursty"], /--arrivals must be poisson or steady, got "bursty"/],
    [[...URL_ARGS, "--players", "1", "--link", "carrier-pigeon"], /--link must be websocket or webtransport/],
    [[...URL_ARGS, "--players", "1", "--link", "webtransport", "--cert-sha256", "xyz"], /--cert-sha256 must be 64 hex digits/],
    [[...URL_ARGS, "--players", "1", "--bot", "trace"], /--bot trace needs --trace <file>/],
    [[...URL_ARGS, "--players", "1", "--workers", "many"], /--workers must be a whole number/],
    [[...URL_ARGS, "--players", "1", "--frobnicate"], /Unknown option '--frobnicate'/],
  ])("%j is refused with a clear message", (args, message) => {
    expect(() => parseLoadArgs(args)).toThrow(LoadUsageError);
    expect(() => parseLoadArgs(args)).toThrow(message);
  });

  it("the CLI prints one line and the usage for bad arguments, exit 2, before anything runs", async () => {
    const r = await runCli([...URL_ARGS, "--players", "1", "--duration", "forever"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const [first, ...rest] = r.stderr.trim().split("\n");
    expect(first).toBe('pnpm load: --duration must be a duration such as 60s, 2m or 500ms, got "forever"');
    expect(rest[0]).toMatch(/^usage: pnpm load --url/);
  });

  it("a trace that does not exist is a clear error", async () => {
    const r = await runCli([...URL_ARGS, "--players", "1", "--bot", "trace", "--trace", "no/such/trace.csv"]);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toMatch(/^pnpm load: --trace .*no\/such\/trace\.csv cannot be read/);
  });
});

describe("the schedule", () => {
  it("players: first starts spread evenly over the ramp, shared round-robin over the workers", () => {
    const starts = intendedStarts({ kind: "players", players: 4, rampMs: 2000 }, 10_000, 1);
    expect(starts).toEqual([0, 500, 1000, 1500]);
    expect(shareOut(starts, 3).map((s) => s.map((b) => b.index))).toEqual([[0, 3], [1], [2]]);
  });

  it("steady arrivals come at 1/R; poisson arrivals average R per second and repeat with their seed", () => {
    expect(intendedStarts({ kind: "arrivals", rate: 4, arrivals: "steady" }, 1000, 1)).toEqual([0, 250, 500, 750]);
    const a = intendedStarts({ kind: "arrivals", rate: 50, arrivals: "poisson" }, 100_000, 3);
    expect(a.length).toBeGreaterThan(4700);
    expect(a.length).toBeLessThan(5300);
    expect(a.every((t, i) => t >= 0 && t < 100_000 && (i === 0 || t >= a[i - 1]!))).toBe(true);
    expect(intendedStarts({ kind: "arrivals", rate: 50, arrivals: "poisson" }, 100_000, 3)).toEqual(a);
    expect(intendedStarts({ kind: "arrivals", rate: 50, arrivals: "poisson" }, 100_000, 4)).not.toEqual(a);
  });

  it("an arrivals pool holds enough accounts for the games in flight, never more than the games", () => {
    expect(accountPool(5, 10, 30_000)).toBe(5);
    expect(accountPool(1000, 2, 20_000)).toBe(62);
  });
});

describe("failure reasons", () => {
  it("a limit's refusal names its setting", () => {
    expect(limitReason("too many registrations from your address; try again in 600 s")).toBe("refused by a limit (FLAPLAB_AUTH_REGISTRATIONS_PER_ADDRESS)");
    expect(errorReason("start-game", new ConnectError("player ld-1 already has 3 games in progress (at most 3); finish one first", Code.ResourceExhausted))).toBe(
      "refused by a limit (FLAPLAB_ENGINE_MAX_GAMES_PER_PLAYER)",
    );
    expect(outcomeReason("game stream refused: HTTP 429 Too Many Requests")).toBe("refused by a limit (FLAPLAB_STREAM_MAX_SESSIONS_PER_ADDRESS)");
  });

  it("other failures say what failed", () => {
    expect(outcomeReason("the game's engine went away and the game could not be resumed: not found")).toBe("resume failed");
    expect(outcomeReason("game stream failed: socket hang up")).toBe("stream error");
    expect(errorReason("login", new ConnectError("deadline", Code.DeadlineExceeded))).toBe("timeout (login)");
    expect(errorReason("login", new ConnectError("invalid username or password", Code.Unauthenticated))).toBe("login failed (Unauthenticated)");
  });
});
