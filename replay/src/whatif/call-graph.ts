import type { CallEntry, StudyRun } from "./study.js";

// Which calls each of a game's actions makes, read from the call logs: an action is a verb of a
// component that no other component calls (the browser or the engine's clock starts it); its
// calls are the records made while serving it, in the order they are made, and whether each one
// waits for the one before it (the next starts after the previous ended) or overlaps it.

export interface CallEdge {
  /** `callee.method<-caller.callerVerb`, e.g. `music.PlayMusic<-engine.HandleInput`. */
  readonly key: string;
  readonly caller: string;
  readonly callerVerb: string;
  readonly callee: string;
  readonly method: string;
  /** Calls per game, per seed (the mean over the seed's runs). */
  readonly perGame: Readonly<Record<string, number>>;
  /** Whether the call starts after the action's previous call ended (in most games that made both). */
  readonly afterPrevious: boolean;
}

export interface Action {
  /** The component and verb that start the action, e.g. `initiator.StartGame`. */
  readonly entry: { readonly component: string; readonly verb: string };
  readonly calls: readonly CallEdge[];
}

/** A call of an action from a record. */
export function edgeKey(c: Pick<CallEntry, "src" | "srcVerb" | "dst" | "dstVerb">): string {
  return `${c.dst}.${c.dstVerb}<-${c.src}.${c.srcVerb}`;
}

/** The actions of a game and their calls, from every run's caller-side records. */
export function deriveActions(runs: readonly StudyRun[]): Action[] {
  const callerRecords = runs.flatMap((r) => r.calls.filter((c) => c.side === "client"));
  const called = new Set(callerRecords.map((c) => `${c.dst}.${c.dstVerb}`));
  const entries = new Map<string, { component: string; verb: string }>();
  for (const c of callerRecords) {
    const id = `${c.src}.${c.srcVerb}`;
    if (!called.has(id)) entries.set(id, { component: c.src, verb: c.srcVerb });
  }
  const seeds = [...new Set(runs.map((r) => r.seed))];
  const actions: Action[] = [];
  for (const [id, entry] of [...entries].sort(([a], [b]) => a.localeCompare(b))) {
    const keys = [...new Set(callerRecords.filter((c) => `${c.src}.${c.srcVerb}` === id).map(edgeKey))];
    const order = callOrder(runs, id, keys);
    const calls = order.map((key, i) => {
      const sample = callerRecords.find((c) => edgeKey(c) === key)!;
      const perGame: Record<string, number> = {};
      for (const seed of seeds) {
        const seedRuns = runs.filter((r) => r.seed === seed);
        const n = seedRuns.reduce((sum, r) => sum + r.calls.filter((c) => c.side === "client" && edgeKey(c) === key).length, 0);
        perGame[seed] = seedRuns.length > 0 ? n / seedRuns.length : 0;
      }
      return {
        key,
        caller: sample.src,
        callerVerb: sample.srcVerb,
        callee: sample.dst,
        method: sample.dstVerb,
        perGame,
        afterPrevious: i > 0 && waitsFor(runs, order[i - 1]!, key),
      };
    });
    actions.push({ entry, calls });
  }
  return actions;
}

/** The action's calls in the order they start, by the median start time within a game. */
function callOrder(runs: readonly StudyRun[], entryId: string, keys: readonly string[]): string[] {
  const firstStart = new Map<string, number[]>();
  for (const run of runs) {
    const byGame = new Map<string, CallEntry[]>();
    for (const c of run.calls) {
      if (c.side !== "client" || `${c.src}.${c.srcVerb}` !== entryId) continue;
      byGame.set(c.gameId, [...(byGame.get(c.gameId) ?? []), c]);
    }
    for (const calls of byGame.values()) {
      const t0 = Math.min(...calls.map((c) => c.endMs - c.ms));
      for (const key of keys) {
        const starts = calls.filter((c) => edgeKey(c) === key).map((c) => c.endMs - c.ms - t0);
        if (starts.length > 0) firstStart.set(key, [...(firstStart.get(key) ?? []), Math.min(...starts)]);
      }
    }
  }
  const at = (key: string) => {
    const s = [...(firstStart.get(key) ?? [Infinity])].sort((a, b) => a - b);
    return s[s.length >> 1]!;
  };
  return [...keys].sort((a, b) => at(a) - at(b) || a.localeCompare(b));
}

/**
 * Whether `next` waits for `previous` in most games that made each once: it starts no earlier than
 * 1 ms (the records' time resolution) before `previous` ended.
 */
function waitsFor(runs: readonly StudyRun[], previous: string, next: string): boolean {
  let waits = 0;
  let games = 0;
  for (const run of runs) {
    const gameIds = new Set(run.calls.map((c) => c.gameId));
    for (const id of gameIds) {
      const a = run.calls.filter((c) => c.side === "client" && c.gameId === id && edgeKey(c) === previous);
      const b = run.calls.filter((c) => c.side === "client" && c.gameId === id && edgeKey(c) === next);
      if (a.length !== 1 || b.length !== 1) continue;
      games++;
      if (b[0]!.endMs - b[0]!.ms >= a[0]!.endMs - 1) waits++;
    }
  }
  return games > 0 && waits * 2 > games;
}
