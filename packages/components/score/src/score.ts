import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import { StoreUnavailableError, type ScoreStore, type StoredRun } from "./store.js";

/** RecordRun is internal: the engine records runs from its own game table. GetScores is for players. */
export const scoreComponent = defineComponent({ name: "score", service: ScoreService, internalMethods: ["RecordRun"], callers: { RecordRun: ["engine"] }, calls: [] });

export const MAX_GAME_ID_LENGTH = 64;
export const MAX_SCORE = 100_000;
/** About 3.8 days of 33 ms ticks: far beyond any real run. */
export const MAX_TICKS = 10_000_000;
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export interface ScoreDeps {
  readonly store: ScoreStore;
  /** Epoch milliseconds, stamped as `finished_at`. Defaults to `Date.now`. */
  readonly clock?: (() => number) | undefined;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** Runs a store call; a database that cannot be reached becomes `Unavailable` (the caller may retry). */
async function fromStore<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof StoreUnavailableError) throw new ConnectError(err.message, Code.Unavailable, undefined, undefined, err);
    throw err;
  }
}

function toMessage(run: StoredRun) {
  return {
    gameId: run.gameId,
    username: run.username,
    score: run.score,
    ticks: run.ticks,
    seed: run.seed,
    finishedAt: timestampFromMs(run.finishedAt),
  };
}

/**
 * RecordRun stores the caller's finished run once per game id; GetScores returns the caller's runs
 * (newest first) and the true top runs of everyone (score descending, then earliest finish).
 * A limit above 100 is refused with InvalidArgument rather than clamped. While the store's database
 * cannot be reached, both answer Unavailable.
 */
export function createScore(deps: ScoreDeps): ServiceImpl<typeof ScoreService> {
  const { store } = deps;
  const clock = deps.clock ?? Date.now;

  return {
    async recordRun(req, ctx) {
      const { username } = requirePrincipal(ctx);
      const gameId = req.gameId;
      if (gameId.length === 0) throw invalid("game_id is required");
      if ([...gameId].length > MAX_GAME_ID_LENGTH) throw invalid(`game_id must be at most ${MAX_GAME_ID_LENGTH} characters`);
      if (!Number.isInteger(req.score) || req.score < 0 || req.score > MAX_SCORE) {
        throw invalid(`score must be between 0 and ${MAX_SCORE}, got ${req.score}`);
      }
      if (!Number.isInteger(req.ticks) || req.ticks < 0 || req.ticks > MAX_TICKS) {
        throw invalid(`ticks must be between 0 and ${MAX_TICKS}, got ${req.ticks}`);
      }
      const run: StoredRun = {
        gameId,
        username,
        score: req.score,
        ticks: req.ticks,
        seed: req.seed,
        finishedAt: clock(),
      };
      if (!(await fromStore(store.insertRun(run)))) {
        throw new ConnectError(`game ${gameId} is already recorded`, Code.AlreadyExists);
      }
      return { run: toMessage(run) };
    },

    async getScores(req, ctx) {
      const { username } = requirePrincipal(ctx);
      if (req.limit > MAX_LIMIT) throw invalid(`limit must be at most ${MAX_LIMIT}, got ${req.limit}`);
      const limit = req.limit === 0 ? DEFAULT_LIMIT : req.limit;
      const [ownRuns, leaderboard] = await fromStore(Promise.all([store.ownRuns(username, limit), store.leaderboard(limit)]));
      return { ownRuns: ownRuns.map(toMessage), leaderboard: leaderboard.map(toMessage) };
    },
  };
}
