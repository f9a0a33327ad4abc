// What the coordinator and its bot workers say to each other over the fork IPC channel.
import type { EncodedHist } from "./hist.js";
import type { LoadOptions } from "./options.js";

/** The latency metrics, each one histogram and one CSV (`<name>.csv`). */
export const METRICS = ["start-game", "input-effect", "input-audio", "frame-interarrival", "bot-lateness"] as const;
export type MetricName = (typeof METRICS)[number];

/** One bot's share of the schedule: its account index and its games' intended starts, ms from the run's start. */
export interface BotShare {
  /** Index over the whole run: names the account and picks the source address. */
  readonly index: number;
  /** Players: the first game's intended start (later games follow at once). Arrivals: the one game's. */
  readonly startMs: number;
}

/** Options as they cross the IPC channel (the certificate hash as hex). */
export type WireOptions = Omit<LoadOptions, "certSha256"> & { readonly certSha256Hex: string | undefined };

export interface InitMessage {
  readonly type: "init";
  readonly worker: number;
  readonly runId: string;
  readonly options: WireOptions;
  readonly bots: readonly BotShare[];
  /** Accounts this worker registers (arrivals: a pool its games take turns on), by global index. */
  readonly accounts: readonly number[];
}

export interface GoMessage {
  readonly type: "go";
  /** The run's start, ms on the shared clock (performance.timeOrigin + performance.now()). */
  readonly startAt: number;
}

export type ToWorker = InitMessage | GoMessage;

export interface WarmupMessage {
  readonly type: "warmup";
  readonly worker: number;
  readonly registered: number;
  readonly accounts: number;
  readonly retries: number;
}

export interface ReadyMessage {
  readonly type: "ready";
  readonly worker: number;
}

/** The worker could not get ready (its accounts could not be registered, a plan failed): the run stops. */
export interface FatalMessage {
  readonly type: "fatal";
  readonly worker: number;
  readonly error: string;
}

/** One second of a worker's run. */
export interface ProgressMessage {
  readonly type: "progress";
  readonly worker: number;
  readonly started: number;
  readonly finished: number;
  readonly failed: number;
  readonly inFlight: number;
  /** Inputs sent in this second. */
  readonly inputs: number;
  /** Bot lateness of this second's actions. */
  readonly lateness: EncodedHist;
  /** CPU time (user + system) over wall time in this second, % of one core. */
  readonly cpuPct: number;
}

/** How one game ended. */
export interface GameRecord {
  readonly worker: number;
  readonly bot: number;
  readonly gameId: string;
  readonly seed: string;
  /** Intended start, ms from the run's start. */
  readonly intendedMs: number;
  /** Actual start, ms from the run's start. */
  readonly startedMs: number;
  readonly endedMs: number;
  readonly outcome: "completed" | "failed" | "unfinished";
  readonly reason: string;
  readonly score: number | null;
  readonly ticks: number | null;
  /** The simulator's score for the presses the bot made (autopilot), else null. */
  readonly simulatorScore: number | null;
  readonly presses: number;
  readonly reconnections: number;
}

export interface FinalMessage {
  readonly type: "final";
  readonly worker: number;
  readonly hists: Readonly<Record<MetricName, EncodedHist>>;
  readonly games: readonly GameRecord[];
  readonly inputs: number;
  /** CPU time over the measured window's wall time, % of one core. */
  readonly cpuPct: number;
  /** Source addresses the worker's bots used ("127.0.0.1" only when it could not bind others). */
  readonly addresses: readonly string[];
}

export type FromWorker = WarmupMessage | ReadyMessage | FatalMessage | ProgressMessage | FinalMessage;
