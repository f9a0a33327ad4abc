// The command line of `pnpm load`: parsed with node:util's parseArgs, checked, and turned into
// one LoadOptions, or a LoadUsageError whose message is the one line a user sees (exit 2).
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import type { StreamLink } from "@flaplab/game-client";

/** Bad arguments: reported as one line, exit code 2. */
export class LoadUsageError extends Error {
  override readonly name = "LoadUsageError";
}

export type BotKind = "autopilot" | "trace";
export type Arrivals = "poisson" | "steady";

/** How games are offered: N bots each playing one game after another, or R new games per second. */
export type LoadShape = { readonly kind: "players"; readonly players: number; readonly rampMs: number } | { readonly kind: "arrivals"; readonly rate: number; readonly arrivals: Arrivals };

export interface LoadOptions {
  /** The deployment's public HTTP base URL (auth, and the initiator unless `initiatorUrl` says otherwise), no trailing slash. */
  readonly url: string;
  /** The initiator's base URL where it has a port of its own (microservices); else `url`. */
  readonly initiatorUrl: string;
  readonly shape: LoadShape;
  readonly durationMs: number;
  readonly drainMs: number;
  readonly link: StreamLink;
  /** SHA-256 of the stream servers' certificate (WebTransport); undefined: read from the stream server. */
  readonly certSha256: Uint8Array | undefined;
  readonly bot: BotKind;
  /** The trace file (bot "trace"). */
  readonly trace: string | undefined;
  /**
   * How long an autopilot game survives before the bot lets the bird fall, ms (the game lasts
   * about 3 s more: the schedule's last 60 ticks and the fall).
   */
  readonly gameLengthMs: number;
  readonly workers: number;
  readonly seed: number;
  /** Where the JSON summary and the CSVs go; undefined: nowhere. */
  readonly out: string | undefined;
  /** Give each bot its own loopback source address (127.0.0.2…254) where the link can bind one. */
  readonly spreadAddresses: boolean;
}

export const USAGE = `usage: pnpm load --url <http://host:port> [--initiator-url <http://host:port>] (--players N [--ramp 5s] | --arrival-rate R [--arrivals poisson|steady] [--seed S])
                 [--duration 60s] [--drain 10s] [--link websocket|webtransport] [--cert-sha256 <hex>]
                 [--bot autopilot|trace] [--trace <file>] [--game-length 6s] [--workers K] [--out <dir>] [--no-spread]`;

/** `60s`, `2m`, `500ms` (a bare number is seconds) → ms, or a usage error naming the option. */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new LoadUsageError(`--${option} must be a duration such as 60s, 2m or 500ms, got "${text}"`);
  const value = Number(m[1]);
  const ms = m[2] === "ms" ? value : m[2] === "m" ? value * 60_000 : value * 1000;
  return Math.round(ms);
}

function positiveInteger(text: string, option: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new LoadUsageError(`--${option} must be a whole number from 1 to ${max}, got "${text}"`);
  }
  return n;
}

function oneOf<T extends string>(text: string, option: string, values: readonly T[]): T {
  if (!(values as readonly string[]).includes(text)) throw new LoadUsageError(`--${option} must be ${values.join(" or ")}, got "${text}"`);
  return text as T;
}

function baseUrl(text: string | undefined, option = "url"): string {
  if (text === undefined) throw new LoadUsageError("--url is required: the deployment's public HTTP address, e.g. http://127.0.0.1:7070");
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new LoadUsageError(`--${option} must be an http(s) URL such as http://127.0.0.1:7070, got "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new LoadUsageError(`--${option} must be http or https, got "${text}"`);
  return url.href.replace(/\/+$/, "");
}

function certHash(text: string): Uint8Array {
  const hex = text.replace(/:/g, "").trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new LoadUsageError(`--cert-sha256 must be 64 hex digits (colons allowed), got "${text}"`);
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

/** Parses `args` (without node and the script); throws LoadUsageError for anything wrong. */
export function parseLoadArgs(args: readonly string[]): LoadOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: "string" },
        "initiator-url": { type: "string" },
        players: { type: "string" },
        ramp: { type: "string" },
        "arrival-rate": { type: "string" },
        arrivals: { type: "string" },
        seed: { type: "string" },
        duration: { type: "string" },
        drain: { type: "string" },
        link: { type: "string" },
        "cert-sha256": { type: "string" },
        bot: { type: "string" },
        trace: { type: "string" },
        "game-length": { type: "string" },
        workers: { type: "string" },
        out: { type: "string" },
        "no-spread": { type: "boolean" },
      },
    }));
  } catch (err) {
    throw new LoadUsageError((err as Error).message.split("\n")[0]!);
  }
  const str = (k: string) => values[k] as string | undefined;
  const url = baseUrl(str("url"));
  const initiatorUrl = str("initiator-url") === undefined ? url : baseUrl(str("initiator-url"), "initiator-url");
  const players = str("players");
  const rate = str("arrival-rate");
  if ((players === undefined) === (rate === undefined)) throw new LoadUsageError("give exactly one of --players N or --arrival-rate R");
  if (players !== undefined && str("arrivals") !== undefined) throw new LoadUsageError("--arrivals goes with --arrival-rate, not --players");
  if (rate !== undefined && str("ramp") !== undefined) throw new LoadUsageError("--ramp goes with --players, not --arrival-rate");
  let shape: LoadShape;
  if (players !== undefined) {
    shape = { kind: "players", players: positiveInteger(players, "players", 100_000), rampMs: parseDuration(str("ramp") ?? "5s", "ramp") };
  } else {
    const r = Number(rate);
    if (!/^\d+(\.\d+)?$/.test(rate!.trim()) || !(r > 0) || r > 10_000) throw new LoadUsageError(`--arrival-rate must be a number of games per second above 0 and at most 10000, got "${rate}"`);
    shape = { kind: "arrivals", rate: r, arrivals: oneOf(str("arrivals") ?? "poisson", "arrivals", ["poisson", "steady"] as const) };
  }
  const durationMs = parseDuration(str("duration") ?? "60s", "duration");
  if (durationMs < 1) throw new LoadUsageError("--duration must be longer than 0");
  const link = oneOf(str("link") ?? "websocket", "link", ["websocket", "webtransport"] as const);
  const cert = str("cert-sha256");
  if (cert !== undefined && link !== "webtransport") throw new LoadUsageError("--cert-sha256 goes with --link webtransport");
  const bot = oneOf(str("bot") ?? "autopilot", "bot", ["autopilot", "trace"] as const);
  const trace = str("trace");
  if (bot === "trace" && trace === undefined) throw new LoadUsageError("--bot trace needs --trace <file> (e.g. replay/traces/6977347407732442987.csv)");
  if (bot !== "trace" && trace !== undefined) throw new LoadUsageError("--trace goes with --bot trace");
  const gameLength = str("game-length");
  if (gameLength !== undefined && bot !== "autopilot") throw new LoadUsageError("--game-length goes with --bot autopilot (a trace's game lasts as the trace does)");
  const gameLengthMs = parseDuration(gameLength ?? "6s", "game-length");
  if (gameLengthMs < 100 || gameLengthMs > 300_000) throw new LoadUsageError("--game-length must be from 100ms to 5m");
  const seedText = str("seed");
  if (seedText !== undefined && shape.kind !== "arrivals") throw new LoadUsageError("--seed goes with --arrival-rate (it seeds the arrivals)");
  const seed = seedText === undefined ? 1 : positiveInteger(seedText, "seed", 2 ** 31 - 1);
  const cores = Math.max(1, availableParallelism());
  const workers = str("workers") === undefined ? cores : positiveInteger(str("workers")!, "workers", 64);
  return {
    url,
    initiatorUrl,
    shape,
    durationMs,
    drainMs: parseDuration(str("drain") ?? "10s", "drain"),
    link,
    certSha256: cert === undefined ? undefined : certHash(cert),
    bot,
    trace,
    gameLengthMs,
    workers,
    seed,
    out: str("out"),
    spreadAddresses: values["no-spread"] !== true,
  };
}
