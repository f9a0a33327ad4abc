import { type ChildProcess, fork } from "node:child_process";
import { availableParallelism } from "node:os";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { ConnectError } from "@connectrpc/connect";
import { ENGINE_NODE_FLAGS, runInCall } from "@flaplab/component";
import type { PlayMusicRequest } from "@flaplab/contracts/music/v1/music_pb";
import type { RecordRunRequest } from "@flaplab/contracts/score/v1/score_pb";
import type { GameSessionDeps, SnapshotKeeper } from "@flaplab/engine";
import { readText } from "@flaplab/settings";
import type { AdmittedUpgrade, HandedOffSession } from "@flaplab/stream-servers";
import type { Logger } from "pino";
import { answerStoreCall } from "./group-store.js";
import type { FromShard, PlayGame, ShardCall, ShardSample, ShardSnapshotSetup, StoreCall, ToShard } from "./protocol.js";
import { ShardSessions } from "./sessions.js";
import { ENGINE_SHARDS } from "./settings.js";

/** The variable that turns shards on: a whole number of shard processes, or "auto" (one per core). */
export const ENGINE_SHARDS_ENV = ENGINE_SHARDS.name;

export class EngineShardsConfigError extends Error {
  override readonly name = "EngineShardsConfigError";
}

/** FLAPLAB_ENGINE_SHARDS: 0 (the default: games play in the group's process), 1…64, or "auto". */
export function engineShardsFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = readText(env, ENGINE_SHARDS)?.trim() ?? "";
  if (raw === "" || raw === "0") return 0;
  if (raw === "auto") return availableParallelism();
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 64) throw new EngineShardsConfigError(`${ENGINE_SHARDS_ENV} must be 0…64 or "auto", got "${raw}"`);
  return n;
}

/**
 * `games`: the group's table (StartGame puts games there; each is detached to the shard that plays
 * it); `music` and `score`: the engine's clients, which make the shards' PlayMusic and RecordRun calls.
 */
export interface EngineShardsOptions extends Pick<GameSessionDeps, "games" | "music" | "score"> {
  readonly count: number;
  /** Whether a game already has a stream in the group's process (the group's own handler's `hasStream`): such a game stays. */
  readonly playedHere: (gameId: string) => boolean;
  /** The group's logger; the shards log at its level. */
  readonly logger: Logger;
  /** The engine's game stream path (the route the shards serve). */
  readonly path: string;
  /** How long a shard has to start (default 30 s). */
  readonly startTimeoutMs?: number;
  /**
   * The group's snapshot keeper. With it, each shard keeps the snapshots of the games it plays as
   * the group keeps its own: as the group's engine, at its keeper's cadence (`writes`), in its
   * store — a shared store (Redis) through the shard's own connection (`FLAPLAB_SNAPSHOT_STORE` in
   * the environment the shard inherits), the group's in-process store through the group. A game
   * handed to a shard leaves this keeper. Without it, the shards keep no snapshots.
   */
  readonly snapshots?: SnapshotKeeper;
}

export interface ShardStats {
  readonly index: number;
  readonly pid: number | undefined;
  /** Games handed to it whose end has not come back. */
  readonly games: number;
  /** Sessions handed to it that it has not reported closed (the group's link counts them). */
  readonly sessions: number;
  /** Games handed to it since the group started. */
  readonly handed: number;
  readonly restarts: number;
  /** Started and taking games (false while it starts, or starts again). */
  readonly ready: boolean;
}

export interface EngineShards {
  /**
   * For `handoff` of the group's WebSocket streams: takes an admitted engine upgrade whose game
   * is in the group's table and not over, detaches the game and sends it, with the socket, to the
   * least busy shard, and returns the session's stand-in (closed when the shard reports the session
   * closed or exits; closing it asks the shard to). False (serve it here) for anything else.
   */
  handoff(upgrade: AdmittedUpgrade): HandedOffSession | false;
  stats(): readonly ShardStats[];
  /** What each shard measured since the last sample (tick lateness, CPU, games), and start again. */
  sample(timeoutMs?: number): Promise<ShardSample[]>;
  close(): Promise<void>;
}

// Beside this module: shard-main.ts in the sources, shard-main.js in the built package.
const SHARD_MAIN = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "./shard-main.ts" : "./shard-main.js", import.meta.url));
const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

interface Shard {
  readonly index: number;
  proc: ChildProcess;
  /** Game ids handed to this shard and not ended. */
  readonly games: Set<string>;
  /** Sessions handed to this shard and not reported closed. */
  readonly sessions: ShardSessions;
  handed: number;
  restarts: number;
  ready: boolean;
}

/** Starts `count` shard processes and resolves once each has said it is ready. */
export async function startEngineShards(opts: EngineShardsOptions): Promise<EngineShards> {
  const { logger, games } = opts;
  let closing = false;
  const shards: Shard[] = [];
  let nextSample = 1;
  let nextSession = 1;
  const samples = new Map<number, (sample: ShardSample) => void>();
  // Every shard starts, and starts again, with the environment the group had when the pool started
  // (its FLAPLAB_* settings, the shared snapshot store among them).
  const env = { ...process.env };

  const onMessage = (shard: Shard, message: FromShard): void => {
    switch (message.type) {
      case "ready":
        shard.ready = true;
        return;
      case "session-closed":
        shard.sessions.closed(message.session);
        return;
      case "ended":
        shard.games.delete(message.gameId);
        games.release(message.gameId);
        return;
      case "call":
        void answer(shard, message);
        return;
      case "store":
        void answerStore(shard, message);
        return;
      case "sample": {
        const waiting = samples.get(message.id);
        samples.delete(message.id);
        waiting?.(message.sample);
        return;
      }
    }
  };

  const answer = async (shard: Shard, message: ShardCall): Promise<void> => {
    const options = message.timeoutMs ? { timeoutMs: message.timeoutMs } : {};
    const run = <T>(fn: () => Promise<T>): Promise<T> => (message.context ? runInCall(message.context, fn) : fn());
    let error: { code: number; message: string } | undefined;
    try {
      if (message.method === "playMusic") await run(() => opts.music.playMusic(message.request as PlayMusicRequest, options));
      else await run(() => opts.score.recordRun(message.request as RecordRunRequest, options));
    } catch (err) {
      const e = ConnectError.from(err);
      error = { code: e.code, message: e.rawMessage };
      if (message.id === 0) logger.warn({ event: "shard-call-failed", shard: shard.index, method: message.method, err: e.message }, "a shard's call failed");
    }
    if (message.id !== 0) send(shard, { type: "result", id: message.id, ...(error ? { error } : {}) });
  };

  const answerStore = async (shard: Shard, message: StoreCall): Promise<void> => {
    const store = opts.snapshots?.store;
    const result = store ? await answerStoreCall(store, message) : { type: "store-result" as const, id: message.id, error: "the group keeps no snapshots" };
    send(shard, result);
  };

  // How the shards keep their games' snapshots (their command line's last argument).
  const snapshotSetup: ShardSnapshotSetup | undefined = opts.snapshots
    ? { engine: opts.snapshots.engine, writes: opts.snapshots.writes, store: opts.snapshots.store.kind === "memory" ? "group" : "shared" }
    : undefined;

  const send = (shard: Shard, message: ToShard, handle?: Socket): boolean => {
    if (!shard.proc.connected) return false;
    try {
      // false from send() means queued behind earlier messages, not lost.
      if (handle) shard.proc.send(message, handle);
      else shard.proc.send(message);
      return true;
    } catch (err) {
      logger.warn({ event: "shard-send-failed", shard: shard.index, err: (err as Error).message }, "could not reach a shard");
      return false;
    }
  };

  const spawnShard = (shard: Shard): Promise<void> => {
    const proc = fork(SHARD_MAIN, [String(shard.index), opts.path, opts.logger.level, snapshotSetup ? JSON.stringify(snapshotSetup) : ""], {
      // The sources' shard entry is TypeScript, run with tsx (resolved from this package's folder); the
      // built one runs with the parent's Node options (its --conditions=built). Either way with the
      // engine's own flags (its small young generation).
      execArgv: [...(SHARD_MAIN.endsWith(".ts") ? ["--import", "tsx"] : process.execArgv), ...ENGINE_NODE_FLAGS],
      cwd: PACKAGE_DIR,
      env,
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    shard.proc = proc;
    shard.ready = false;
    proc.on("message", (m: FromShard) => onMessage(shard, m));
    proc.once("exit", (code, signal) => {
      // Its sessions are gone with it: the group's link stops counting them.
      const sessionsLost = shard.sessions.releaseAll();
      if (closing) return;
      // Its games end here; with snapshots, their players may resume them from the store (ResumeGame).
      const lost = [...shard.games];
      for (const id of lost) games.release(id);
      shard.games.clear();
      logger.error({ event: "engine-shard-exited", shard: shard.index, code, signal, gamesLost: lost.length, sessionsLost }, "an engine shard exited; starting it again");
      shard.restarts++;
      void spawnShard(shard).catch((err: unknown) => logger.error({ event: "engine-shard-restart-failed", shard: shard.index, err: (err as Error).message }, "an engine shard did not start again"));
    });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`engine shard ${shard.index} not ready after ${opts.startTimeoutMs ?? 30_000} ms`)), opts.startTimeoutMs ?? 30_000);
      const ready = (m: FromShard) => {
        if (m.type !== "ready") return;
        clearTimeout(timer);
        proc.off("message", ready);
        resolve();
      };
      proc.on("message", ready);
      proc.once("exit", () => {
        clearTimeout(timer);
        reject(new Error(`engine shard ${shard.index} exited while starting`));
      });
    });
  };

  try {
    await Promise.all(
      Array.from({ length: opts.count }, (_, index) => {
        const shard: Shard = {
          index,
          proc: undefined as unknown as ChildProcess,
          games: new Set(),
          sessions: new ShardSessions((session, code, reason) => {
            if (!send(shard, { type: "close-session", session, code, reason })) {
              logger.warn({ event: "shard-close-session-failed", shard: shard.index, session }, "could not ask a shard to close a session");
            }
          }),
          handed: 0,
          restarts: 0,
          ready: false,
        };
        shards.push(shard);
        return spawnShard(shard);
      }),
    );
  } catch (err) {
    closing = true;
    for (const s of shards) s.proc?.kill("SIGKILL");
    throw err;
  }
  logger.info({ event: "engine-shards-ready", shards: shards.map((s) => s.proc.pid) }, "engine shards ready");

  return {
    handoff(upgrade) {
      if (closing || upgrade.kind !== "engine") return false;
      const game = games.get(upgrade.gameId);
      // Unknown, finished, or someone else's game: the group's own handler refuses it properly.
      // A game with a stream here already (say, over WebTransport) stays: the handler refuses the second stream 4409.
      if (!game || game.state.phase === "over" || game.owner.username !== upgrade.principal.username || opts.playedHere(upgrade.gameId)) return false;
      let target: Shard | undefined;
      for (const s of shards) if (s.ready && s.proc.connected && (!target || s.games.size < target.games.size)) target = s;
      if (!target) return false;
      const snapshot = games.detach(upgrade.gameId);
      if (!snapshot) return false;
      const session = nextSession++;
      const message: PlayGame = {
        type: "play",
        session,
        game: snapshot,
        path: upgrade.path,
        principal: upgrade.principal,
        upgrade: { method: upgrade.req.method ?? "GET", url: upgrade.req.url ?? upgrade.path, headers: upgrade.req.headers },
        head: new Uint8Array(upgrade.head),
      };
      target.games.add(snapshot.id);
      target.handed++;
      if (!send(target, message, upgrade.socket)) {
        // The game comes back and is played here.
        target.games.delete(snapshot.id);
        target.handed--;
        games.release(snapshot.id);
        games.adopt(snapshot);
        logger.warn({ event: "shard-handoff-failed", shard: target.index, gameId: snapshot.id }, "could not hand a game to its shard; playing it here");
        return false;
      }
      // The shard keeps the game's snapshots now (a game resumed here had a record in the group's keeper).
      opts.snapshots?.handOff(snapshot.id);
      // Nothing from the shard is read before this returns: its report of the session comes after.
      return target.sessions.add(session);
    },
    sample(timeoutMs = 10_000) {
      return Promise.all(
        shards.map(
          (shard) =>
            new Promise<ShardSample>((resolve, reject) => {
              const id = nextSample++;
              const timer = setTimeout(() => {
                samples.delete(id);
                reject(new Error(`engine shard ${shard.index} sent no sample within ${timeoutMs} ms`));
              }, timeoutMs);
              samples.set(id, (s) => {
                clearTimeout(timer);
                resolve(s);
              });
              if (!send(shard, { type: "sample", id })) {
                clearTimeout(timer);
                samples.delete(id);
                reject(new Error(`engine shard ${shard.index} is not running`));
              }
            }),
        ),
      );
    },
    stats() {
      return shards.map((s) => ({ index: s.index, pid: s.proc.pid, games: s.games.size, sessions: s.sessions.size, handed: s.handed, restarts: s.restarts, ready: s.ready && s.proc.connected }));
    },
    async close() {
      closing = true;
      await Promise.all(
        shards.map(
          (s) =>
            new Promise<void>((resolve) => {
              if (s.proc.exitCode !== null || s.proc.signalCode !== null) return resolve();
              s.proc.once("exit", () => resolve());
              // A shard ends its sessions and exits when its channel closes.
              if (s.proc.connected) s.proc.disconnect();
              setTimeout(() => s.proc.kill("SIGKILL"), 3000).unref();
            }),
        ),
      );
    },
  };
}
