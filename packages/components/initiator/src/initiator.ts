import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import { checkGameId, defineComponent, requirePrincipal } from "@flaplab/component";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import type { EnginePlacement, EngineTarget } from "./placement.js";

export const initiatorComponent = defineComponent({ name: "initiator", service: InitiatorService, calls: ["worldgen", "engine"] });

/** FlappyGo's geometry: the browser's 480×640 game box and 34×24 bird. */
export const DEFAULT_VIEWPORT = { width: 480, height: 640 } as const;
export const DEFAULT_BIRD = { width: 34, height: 24 } as const;

/** Where clients open a game's music stream: over WebTransport, and over plain WebSocket. */
export interface MusicEndpoints {
  readonly musicUrl: string;
  /** `ws://` or `wss://` URL of the same stream. */
  readonly musicWsUrl: string;
}

/** Signs the ticket that opens a game's streams (`createStreamTicketSigner` of @flaplab/identity). */
export interface StreamTicketIssuer {
  /** A ticket for the game's streams; its game stream opens only at `engine` (the engine's group name). */
  sign(gameId: string, username: string, engine: string): Promise<{ readonly ticket: string }>;
}

export interface InitiatorDeps {
  readonly worldgen: Client<typeof WorldGenService>;
  /** The engines a game may go to, best first (`singleEngine`, `rendezvousPlacement`). */
  readonly engines: EnginePlacement;
  readonly music: MusicEndpoints;
  /** Issues the stream ticket of each game, for the player who started it. */
  readonly tickets: StreamTicketIssuer;
  readonly newGameId?: () => string;
}

/**
 * Codes on which the next engine is tried: this one is down or draining. (A full engine says so in
 * its heartbeat and is not ranked; ResourceExhausted is also the player's own game limit.)
 */
const TRY_NEXT: ReadonlySet<Code> = new Set([Code.Unavailable, Code.DeadlineExceeded]);

/**
 * StartGame: a game id, a world from the world generator, then the game in an engine (owned by
 * the caller; the placement's first engine that takes it), then a stream ticket naming the game
 * and the caller: the client opens the game's streams with it. ResumeGame: the game continued
 * from its snapshot on the placement's first engine that takes it, with a new ticket.
 */
export function createInitiator(deps: InitiatorDeps): ServiceImpl<typeof InitiatorService> {
  const newGameId = deps.newGameId ?? randomUUID;
  return {
    async startGame(req, ctx) {
      const { username } = requirePrincipal(ctx);
      const viewport = sized(req.viewport, DEFAULT_VIEWPORT, "viewport", 64, 4096);
      const bird = sized(req.bird, DEFAULT_BIRD, "bird", 1, 512);
      if (bird.width >= viewport.width || bird.height >= viewport.height) {
        throw new ConnectError("bird must be smaller than the viewport", Code.InvalidArgument);
      }
      const gameId = newGameId();
      const { world } = await deps.worldgen.generateWorld({ gameId, viewport, seed: req.seed });
      if (!world) throw new ConnectError("world generator returned no world", Code.Internal);
      const { engine, answer } = await onFirstEngine(await deps.engines(gameId, "start"), (e) => e.client.startGame({ gameId, world, bird }));
      const { ticket } = await deps.tickets.sign(gameId, username, engine.name);
      return answerFor(engine, { gameId, seed: world.seed, pipesInView: answer.pipesInView, streamTicket: ticket });
    },

    async resumeGame(req, ctx) {
      const { username } = requirePrincipal(ctx);
      // Checked before anything uses it: the placement looks the game up in the snapshot store.
      const problem = checkGameId(req.gameId);
      if (problem !== undefined) throw new ConnectError(problem, Code.InvalidArgument);
      const { engine, answer } = await onFirstEngine(await deps.engines(req.gameId, "resume"), (e) => e.client.resumeGame({ gameId: req.gameId }));
      const { ticket } = await deps.tickets.sign(req.gameId, username, engine.name);
      return {
        game: answerFor(engine, { gameId: req.gameId, seed: answer.seed, pipesInView: answer.pipesInView, streamTicket: ticket }),
        tick: answer.tick,
      };
    },
  };

  function answerFor(engine: EngineTarget, game: { gameId: string; seed: bigint; pipesInView: number; streamTicket: string }) {
    return {
      ...game,
      engineUrl: engine.engineUrl,
      engineWsUrl: engine.engineWsUrl,
      musicUrl: deps.music.musicUrl,
      musicWsUrl: deps.music.musicWsUrl,
    };
  }
}

/** Calls `call` on each engine in turn until one answers; one that is down or draining is skipped. */
async function onFirstEngine<T>(engines: readonly EngineTarget[], call: (engine: EngineTarget) => Promise<T>): Promise<{ engine: EngineTarget; answer: T }> {
  let last: ConnectError | undefined;
  for (const engine of engines) {
    try {
      return { engine, answer: await call(engine) };
    } catch (err) {
      last = ConnectError.from(err);
      if (!TRY_NEXT.has(last.code)) throw last;
    }
  }
  throw new ConnectError(
    last ? `no engine could take the game (${engines.length} tried; last: ${last.rawMessage})` : "no engine is up",
    Code.Unavailable,
  );
}

function sized(
  box: { width: number; height: number } | undefined,
  fallback: { width: number; height: number },
  what: string,
  min: number,
  max: number,
): { width: number; height: number } {
  if (!box || (box.width === 0 && box.height === 0)) return { ...fallback };
  for (const [k, v] of [["width", box.width], ["height", box.height]] as const) {
    if (!Number.isInteger(v) || v < min || v > max) {
      throw new ConnectError(`${what} ${k} must be an integer from ${min} to ${max}, got ${v}`, Code.InvalidArgument);
    }
  }
  return { width: box.width, height: box.height };
}
