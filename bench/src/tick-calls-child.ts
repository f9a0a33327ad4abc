// Child process for section 7: the engine's tick path (TickScheduler, GameTable, the game session
// handler over in-memory sessions) with its PlayMusic calls going nowhere (idle), to the music
// component in this process (direct, the monolith) or to another process (networked).
import type { Client } from "@connectrpc/connect";
import type { MusicService } from "@flaplab/contracts/music/v1/music_pb";
import { createGameSessionHandler, GameTable } from "@flaplab/engine";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { createMusic, createMusicStreams, musicComponent } from "@flaplab/music";
import { createRuntime, type Runtime } from "@flaplab/runtime";
import { FlapBot, planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { serveRequests } from "./child.js";
import { benchPlayer, clientInput, idleMusic, idleScore, measuringScheduler, rampGames, silentLogger } from "./engine-harness.js";
import { Hist, type Percentiles } from "./hist.js";
import { startProfile, stopProfile } from "./inspector-profile.js";
import { benchKeys, inProcessTopology, musicTopology } from "./rpc-fixture.js";

export type TickCallsMode = "idle" | "direct" | "networked";

export interface TickCallsRequest {
  readonly type: "step";
  readonly mode: TickCallsMode;
  readonly keysDir: string;
  /** The music server's port (networked). */
  readonly musicPort?: number;
  readonly games: number;
  readonly rampMs: number;
  readonly settleMs: number;
  readonly measureMs: number;
  /** Write a CPU profile of the measurement window here. */
  readonly profileFile?: string;
}

export interface TickCallsResult {
  readonly mode: TickCallsMode;
  readonly games: number;
  readonly ticks: number;
  /** Tick lateness, µs. */
  readonly lateness: Percentiles;
  /** Input written → its ack sent by the engine, µs. */
  readonly ack: Percentiles;
  /** PlayMusic calls the engine made during the measurement, their caller-side latency (µs), and failures. */
  readonly musicCalls: number;
  readonly musicLatency: Percentiles;
  readonly musicErrors: number;
  /** Flaps (inputs acked) during the measurement: every one makes a PlayMusic call. */
  readonly flaps: number;
  readonly cpuPerFrameUs: number;
  readonly ended: number;
}

const schedule = planSurvival(EASY_SEED);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `inner` with each call timed and counted. */
function timedMusic(inner: Client<typeof MusicService>, stats: { calls: number; errors: number; latency: Hist }): Client<typeof MusicService> {
  return {
    playMusic: (req, options) => {
      const t = performance.now();
      const done = (ok: boolean) => {
        stats.calls++;
        if (!ok) stats.errors++;
        stats.latency.record((performance.now() - t) * 1000);
      };
      const p = inner.playMusic(req, options);
      p.then(
        () => done(true),
        () => done(false),
      );
      return p;
    },
  };
}

async function step(req: TickCallsRequest): Promise<TickCallsResult> {
  const keys = await benchKeys(req.keysDir);
  let runtime: Runtime | undefined;
  let music: Client<typeof MusicService>;
  if (req.mode === "idle") music = idleMusic();
  else if (req.mode === "direct") {
    // The monolith: music mounted in this process, called directly.
    runtime = createRuntime({ topology: inProcessTopology("direct"), group: "all", verifier: keys.verifier, serviceSigner: keys.serviceSigner });
    const streams = createMusicStreams();
    for (let i = 0; i < req.games; i++) streams.open(`g${i}`, () => {});
    runtime.mount(musicComponent, createMusic({ streams }));
    music = runtime.client(musicComponent, "engine");
  } else {
    // Microservices: music in another process, the topologies' default network (Connect binary, HTTP/1.1).
    runtime = createRuntime({ topology: musicTopology(req.musicPort!), group: "engine", verifier: keys.verifier, serviceSigner: keys.serviceSigner });
    music = runtime.client(musicComponent, "engine");
  }
  const stats = { calls: 0, errors: 0, latency: new Hist() };
  const games = new GameTable({ maxGames: req.games + 10, maxGamesPerPlayer: req.games + 10, idleTtlMs: 3600_000 });
  const { scheduler, close } = measuringScheduler();
  const handler = createGameSessionHandler({ games, scheduler, music: timedMusic(music, stats), score: idleScore(), logger: silentLogger });
  const bot = new FlapBot(schedule.flapTicks);
  const principal = benchPlayer();
  const ack = new Hist();
  let frames = 0;
  let acked = 0;
  let ended = 0;
  const sessions: MemoryStreamSession[] = [];
  await rampGames(games, schedule, principal, req.games, req.rampMs, (id, game) => {
    let seq = 0;
    let lastTick = 0;
    let sentAt = 0;
    const input = () => {
      sentAt = performance.now();
      session.push(clientInput(++seq));
    };
    const session: MemoryStreamSession = new MemoryStreamSession({
      gameId: id,
      principal,
      keepSent: false,
      onSend: () => {
        const tick = game.state.tick;
        if (tick > lastTick) {
          lastTick = tick;
          frames++;
          if (bot.pressOnFrame(tick)) input();
        } else if (sentAt > 0) {
          // The ack of the last input (the engine answers an input before anything else).
          ack.record((performance.now() - sentAt) * 1000);
          sentAt = 0;
          acked++;
        }
      },
    });
    void session.closed.then(({ by }) => {
      if (by === "server") ended++;
    });
    sessions.push(session);
    handler(session);
    input();
  });
  await sleep(req.settleMs);
  scheduler.resetStats();
  ack.reset();
  stats.latency.reset();
  stats.calls = 0;
  stats.errors = 0;
  const before = { frames, acked, ended };
  const cpu0 = process.cpuUsage();
  if (req.profileFile) await startProfile();
  await sleep(req.measureMs);
  if (req.profileFile) await stopProfile(req.profileFile);
  const cpu = process.cpuUsage(cpu0);
  const result: TickCallsResult = {
    mode: req.mode,
    games: req.games,
    ticks: scheduler.ticks,
    lateness: scheduler.lateness.summary(),
    ack: ack.summary(),
    musicCalls: stats.calls,
    musicLatency: stats.latency.summary(),
    musicErrors: stats.errors,
    flaps: acked - before.acked,
    cpuPerFrameUs: (cpu.user + cpu.system) / Math.max(1, frames - before.frames),
    ended: ended - before.ended,
  };
  for (const s of sessions) s.leave();
  await sleep(50);
  scheduler.stop();
  await close();
  runtime?.close();
  return result;
}

serveRequests(async (req: TickCallsRequest) => step(req));
