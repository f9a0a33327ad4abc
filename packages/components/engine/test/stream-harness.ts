// The game stream handler on a manual clock, with fake music and score clients: what the game stream tests share.
import { type Frame, GameStreamMessageSchema, type GameSummary, type InputAck } from "@flaplab/contracts/engine/v1/stream_pb";
import type { World } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { type ClientView, FrameDecoder } from "@flaplab/game-protocol";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { GameTable, type GameSessionDeps, ManualTickClock, TickScheduler, courseOf, createGameSessionHandler } from "../src/index.js";
import { fakeMusic, fakeScore, flush, input, memoryLogger, principal } from "./fakes.js";
import { openWorld } from "./fixtures.js";

export const alice = principal("alice");
export const bob = principal("bob");

export interface Setup {
  games: GameTable;
  clock: ManualTickClock;
  scheduler: TickScheduler;
  music: ReturnType<typeof fakeMusic>;
  score: ReturnType<typeof fakeScore>;
  logger: ReturnType<typeof memoryLogger>;
  handler: ReturnType<typeof createGameSessionHandler>;
  /** Creates game `id` owned by alice (as StartGame does). */
  addGame(id: string, world?: World): void;
  /** Opens a session for `id` as `who`. */
  connect(id: string, who?: typeof alice): MemoryStreamSession;
}

export function setup(
  overrides: Omit<Partial<GameSessionDeps>, "music" | "score"> & { music?: ReturnType<typeof fakeMusic>; score?: ReturnType<typeof fakeScore> } = {},
): Setup {
  const games = new GameTable();
  const clock = new ManualTickClock(10_000);
  const scheduler = new TickScheduler({ clock });
  const music = overrides.music ?? fakeMusic();
  const score = overrides.score ?? fakeScore();
  const logger = memoryLogger();
  const handler = createGameSessionHandler({
    games,
    scheduler,
    logger,
    recordRetryDelaysMs: [0, 0, 0],
    ...overrides,
    music: music.client,
    score: score.client,
  });
  return {
    games,
    clock,
    scheduler,
    music,
    score,
    logger,
    handler,
    addGame(id, world = openWorld()) {
      games.create({
        id,
        owner: { username: alice.username, token: alice.token, expiresAt: alice.expiresAt },
        course: courseOf(world),
        seed: world.seed,
      });
    },
    connect(id, who = alice) {
      const session = new MemoryStreamSession({ gameId: id, principal: who });
      handler(session);
      return session;
    },
  };
}

/** The tick frames sent. */
export function frames(session: MemoryStreamSession): Frame[] {
  return session.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "frame" ? [m.kind.value] : []));
}

/** The input acks sent. */
export function acks(session: MemoryStreamSession): InputAck[] {
  return session.messages(GameStreamMessageSchema).flatMap((m) => (m.kind.case === "ack" ? [m.kind.value] : []));
}

/** [tick, is an ack, seq] of every tick frame (its reflected_seq) and input ack, in order. */
export function sequence(session: MemoryStreamSession): [number, boolean, number | undefined][] {
  return session.messages(GameStreamMessageSchema).flatMap((m): [number, boolean, number | undefined][] =>
    m.kind.case === "frame" ? [[m.kind.value.tick, false, m.kind.value.reflectedSeq]] : m.kind.case === "ack" ? [[m.kind.value.tick, true, m.kind.value.seq]] : [],
  );
}

/** The client's view after every tick frame and input ack, in order. */
export function views(session: MemoryStreamSession): ClientView[] {
  const decoder = new FrameDecoder();
  return session
    .messages(GameStreamMessageSchema)
    .flatMap((m) => (m.kind.case === "frame" ? [decoder.apply(m.kind.value)] : m.kind.case === "ack" ? [decoder.applyAck(m.kind.value)] : []));
}

export function summaryOf(session: MemoryStreamSession): GameSummary | undefined {
  const last = session.messages(GameStreamMessageSchema).at(-1);
  return last?.kind.case === "summary" ? last.kind.value : undefined;
}

/** Sends the start input and lets the handler read it. */
export async function start(session: MemoryStreamSession): Promise<void> {
  input(session, 1);
  await flush();
}

/** The tick period with the handler's async work (reads, RecordRun) given time to run. */
export async function tick(s: Setup, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) {
    s.clock.advance(33);
    await flush();
  }
}
