import type { GroupCpu } from "@flaplab/deployment";
import { access, constants, readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readText } from "@flaplab/settings";
import { CHROMIUM } from "../settings.js";
import { parseTrace, TraceError, type Trace } from "@flaplab/input-traces";

/** A usage or input problem: reported with a clear message and exit code 2, before any run. */
export class ReplayUsageError extends Error {
  override readonly name = "ReplayUsageError";
}

export interface LoadedTrace {
  readonly path: string;
  readonly trace: Trace;
  readonly seed: bigint;
}

export interface ReplayOptions {
  /** The web client's URL, e.g. http://127.0.0.1:5173/. */
  readonly url: string;
  readonly traces: readonly LoadedTrace[];
  readonly runs: number;
  readonly out: string;
  /** Folder name for this deployment (defaults to the topology the page reports). */
  readonly deployment: string | undefined;
  /** Extra attempts for a failed run; every attempt is kept and counted. */
  readonly retries: number;
  /** Folder(s) with the servers' call logs (rpc-*.ndjson), to copy each game's records. */
  readonly rpcLogs: readonly string[];
  readonly chromium: string;
  /** Keep Chromium's task deferral after key presses (see NO_INPUT_DEFERRAL_ARG in play.ts). */
  readonly stockScheduling: boolean;
  /** Give up on a game this long after its trace should have ended. */
  readonly slackMs: number;
  /** The page's stream link (`?link=`): WebTransport (the default) or plain WebSocket. */
  readonly link: StreamLink;
  /**
   * A fault injected into every run's game at a tick. The page then presses on the game's tick
   * clock (`flaplab.pressAtTicks`) instead of the trace's times, so a game paused by the fault
   * stays comparable to the simulator.
   */
  readonly fault?: FaultPlan;
  /**
   * The page presses at the trace's flap ticks on the game's tick clock (`flaplab.pressAtTicks`),
   * not at the trace's times: the game is the simulator's whatever the machine's timing (a human
   * trace whose outcome turns on a tick). Latency is measured from each press as always.
   */
  readonly pressOnTicks?: boolean;
  /**
   * The deployment's server processes' CPU time so far (`Deployment.cpuTimes`), when the replay
   * runs a deployment it started: sampled before and after each game, into the run's `serverCpu`.
   */
  readonly serverCpu?: () => Promise<readonly GroupCpu[]>;
}

/**
 * What can go wrong on purpose: a process killed (SIGKILL) or drained (SIGTERM), or the browser's
 * link to the game's engine cut (its toxiproxy proxies off for a moment: every connection dropped).
 */
export type FaultKind = "engine-kill" | "engine-drain" | "music-kill" | "score-kill" | "link-cut";
export const FAULT_KINDS: readonly FaultKind[] = ["engine-kill", "engine-drain", "music-kill", "score-kill", "link-cut"];

export interface FaultPlan {
  readonly kind: FaultKind;
  /** The game tick at (or right after) which it happens. */
  readonly tick: number;
  /** Does it to the deployment serving game `gameId`; says what it did ("SIGKILL engine-2 (pid 4242)"). */
  inject(gameId: string): Promise<string>;
}

/** A `--fault <kind>@<tick>` value, or a usage error saying what one looks like. */
export function parseFault(text: string): { kind: FaultKind; tick: number } {
  const m = /^([a-z-]+)@(\d+)$/.exec(text.trim());
  const kind = m?.[1] as FaultKind | undefined;
  const tick = Number(m?.[2]);
  if (!m || !kind || !FAULT_KINDS.includes(kind) || !Number.isInteger(tick) || tick < 1) {
    throw new ReplayUsageError(`--fault must be <kind>@<tick> with a kind of ${FAULT_KINDS.join(", ")} and a tick ≥ 1, got "${text}"`);
  }
  return { kind, tick };
}

/** How the page reaches the game's streams (the page's `?link=`). */
export type StreamLink = "webtransport" | "websocket";
export const STREAM_LINKS: readonly StreamLink[] = ["webtransport", "websocket"];

/** A `--link` value, or a usage error naming the links there are. */
export function parseLink(text: string, flag = "--link"): StreamLink {
  if ((STREAM_LINKS as readonly string[]).includes(text)) return text as StreamLink;
  throw new ReplayUsageError(`${flag} must be ${STREAM_LINKS.join(" or ")}, got "${text}"`);
}

/** Where a deployment's runs are filed: its name, plus "+websocket" on that link. */
export function deploymentFolder(name: string, link: StreamLink): string {
  return link === "webtransport" ? name : `${name}+${link}`;
}

export const USAGE = `usage: pnpm replay --url <web url> --trace <file> [--trace <file> …] --runs <n> --out <dir>
                   [--deployment <name>] [--retries <n>] [--rpc-logs <dir>] [--chromium <path>]
                   [--slack-ms <ms>] [--stock-scheduling] [--link webtransport|websocket] [--press-on-ticks]`;

export async function parseReplayArgs(argv: readonly string[], cwd: string): Promise<ReplayOptions> {
  const values = (() => {
    try {
      return parseArgs({
        args: [...argv],
        options: {
          url: { type: "string" },
          trace: { type: "string", multiple: true },
          runs: { type: "string", default: "1" },
          out: { type: "string" },
          deployment: { type: "string" },
          retries: { type: "string", default: "0" },
          "rpc-logs": { type: "string", multiple: true },
          chromium: { type: "string", default: readText(process.env, CHROMIUM) ?? "/usr/bin/chromium" },
          "slack-ms": { type: "string", default: "15000" },
          "stock-scheduling": { type: "boolean", default: false },
          link: { type: "string", default: "webtransport" },
          "press-on-ticks": { type: "boolean", default: false },
        },
      }).values;
    } catch (err) {
      throw new ReplayUsageError(`${(err as Error).message}\n${USAGE}`);
    }
  })();
  if (!values.url) throw new ReplayUsageError(`--url is required\n${USAGE}`);
  if (!values.trace?.length) throw new ReplayUsageError(`at least one --trace is required\n${USAGE}`);
  if (!values.out) throw new ReplayUsageError(`--out is required\n${USAGE}`);
  let url: URL;
  try {
    url = new URL(values.url);
  } catch {
    throw new ReplayUsageError(`--url ${values.url} is not a URL`);
  }
  const runs = positiveInt(values.runs, "--runs", 1, 10_000);
  const retries = positiveInt(values.retries, "--retries", 0, 100);
  const slackMs = positiveInt(values["slack-ms"], "--slack-ms", 1000, 600_000);
  const link = parseLink(values.link);
  try {
    await access(values.chromium, constants.X_OK);
  } catch {
    throw new ReplayUsageError(
      `no browser at ${values.chromium}: install Debian's chromium (apt-get install chromium) or pass --chromium <path>`,
    );
  }
  const traces = await Promise.all(values.trace.map((p) => loadTrace(resolve(cwd, p))));
  return {
    url: url.toString(),
    traces,
    runs,
    out: resolve(cwd, values.out),
    deployment: values.deployment,
    retries,
    rpcLogs: (values["rpc-logs"] ?? []).map((p) => resolve(cwd, p)),
    chromium: values.chromium,
    stockScheduling: values["stock-scheduling"],
    slackMs,
    link,
    pressOnTicks: values["press-on-ticks"],
  };
}

function positiveInt(text: string, flag: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new ReplayUsageError(`${flag} must be an integer from ${min} to ${max}, got ${text}`);
  return n;
}

/** Reads and checks a trace file; a broken file is a usage error that names the file and line. */
export async function loadTrace(path: string): Promise<LoadedTrace> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ReplayUsageError(`cannot read trace ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let trace: Trace;
  try {
    trace = parseTrace(text, { fileName: basename(path) });
  } catch (err) {
    if (err instanceof TraceError) throw new ReplayUsageError(`bad trace: ${err.message}`);
    throw err;
  }
  if (trace.seed === undefined) {
    throw new ReplayUsageError(`trace ${path} has no seed: name a FlappyGo CSV <seed>.csv or use a FlapLab JSON trace`);
  }
  return { path, trace, seed: trace.seed };
}
