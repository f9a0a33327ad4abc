import { type CallOptions, type Client, Code, ConnectError } from "@connectrpc/connect";
import { type CallContext, runInCall } from "@flaplab/component";
import type { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import type { Game } from "./game.js";
import { messageOf } from "./message-of.js";
import { PERMANENT_RECORD_CODES, type RunOutbox } from "./pending-runs.js";

export const DEFAULT_RECORD_RETRY_DELAYS_MS: readonly number[] = [100, 400, 1600];
export const DEFAULT_RECORD_TIMEOUT_MS = 5000;

/** The logging a RunRecorder does; a pino logger fits. */
export interface RecorderLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RunRecorderOptions {
  readonly score: Client<typeof ScoreService>;
  readonly logger: RecorderLogger;
  /** Pauses before each retry of RecordRun when it is Unavailable (default 100, 400, 1600 ms). */
  readonly retryDelaysMs?: readonly number[];
  /** Deadline of one RecordRun attempt, ms (default 5000). */
  readonly timeoutMs?: number;
  /** How to wait between retries (default setTimeout). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Where a run goes that the score component could not take now (see `GameSessionDeps.outbox`). */
  readonly outbox?: RunOutbox | undefined;
}

/** What became of a finished game's run, as its summary says. */
export interface RecordOutcome {
  readonly recorded: boolean;
  /** Why it was not recorded ("" when it was). */
  readonly error: string;
  /** Not recorded now, but kept in the outbox to be recorded when the score component is back. */
  readonly pending: boolean;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Records finished games' runs with the score component: one RecordRun per attempt (deadline
 * `timeoutMs`), retried after each of `retryDelaysMs` while Unavailable; an AlreadyExists on a
 * retry means an earlier attempt that looked lost did store the run. A run that still failed for
 * a reason that may pass goes to the outbox (when there is one) and is `pending`.
 */
export class RunRecorder {
  private readonly score: Client<typeof ScoreService>;
  private readonly logger: RecorderLogger;
  private readonly retryDelaysMs: readonly number[];
  private readonly options: CallOptions;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly outbox: RunOutbox | undefined;

  constructor(options: RunRecorderOptions) {
    this.score = options.score;
    this.logger = options.logger;
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RECORD_RETRY_DELAYS_MS;
    this.options = { timeoutMs: options.timeoutMs ?? DEFAULT_RECORD_TIMEOUT_MS };
    this.sleep = options.sleep ?? realSleep;
    this.outbox = options.outbox;
  }

  /** Records `game`'s run (its score and ticks now), the calls made in `call`. Never rejects. */
  async record(game: Game, call: CallContext): Promise<RecordOutcome> {
    const result = await this.attempt(game, call);
    if (result.recorded || !result.transient || !this.outbox) return { recorded: result.recorded, error: result.error, pending: false };
    const state = game.state;
    try {
      this.outbox.add({
        gameId: game.id,
        score: state.score,
        ticks: state.tick,
        seed: game.seed.toString(),
        player: game.owner.username,
        traceparent: game.traceparent,
      });
    } catch (err) {
      this.logger.error({ gameId: game.id, err: messageOf(err) }, "run could not be kept in the outbox: lost");
      return { recorded: false, error: result.error, pending: false };
    }
    this.logger.warn({ event: "run-pending", gameId: game.id, err: result.error }, "score unreachable: run kept in the outbox");
    return { recorded: false, error: result.error, pending: true };
  }

  /** RecordRun with retries; `transient` when the score component may take it later. */
  private async attempt(game: Game, call: CallContext): Promise<{ recorded: boolean; error: string; transient: boolean }> {
    const state = game.state;
    const request = { gameId: game.id, score: state.score, ticks: state.tick, seed: game.seed };
    const delays = this.retryDelaysMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await runInCall(call, () => this.score.recordRun(request, this.options));
        return { recorded: true, error: "", transient: false };
      } catch (err) {
        const e = ConnectError.from(err);
        // An earlier attempt that looked lost did store the run.
        if (e.code === Code.AlreadyExists && attempt > 0) return { recorded: true, error: "", transient: false };
        const delay = delays[attempt];
        if (e.code === Code.Unavailable && delay !== undefined) {
          this.logger.warn({ gameId: game.id, attempt: attempt + 1, err: e.message }, "RecordRun unavailable, retrying");
          await this.sleep(delay);
          continue;
        }
        this.logger.error({ gameId: game.id, attempts: attempt + 1, err: e.message }, "RecordRun failed");
        return { recorded: false, error: e.message, transient: !PERMANENT_RECORD_CODES.has(e.code) };
      }
    }
  }
}
