import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import type { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";

export const initiatorComponent = defineComponent({ name: "initiator", service: InitiatorService });

/** FlappyGo's geometry: the browser's 480×640 game box and 34×24 bird. */
export const DEFAULT_VIEWPORT = { width: 480, height: 640 } as const;
export const DEFAULT_BIRD = { width: 34, height: 24 } as const;

/** Where clients open a game's streams: over WebTransport, and over plain WebSocket. */
export interface StreamEndpoints {
  readonly engineUrl: string;
  readonly musicUrl: string;
  /** `ws://` or `wss://` URLs of the same streams. */
  readonly engineWsUrl: string;
  readonly musicWsUrl: string;
}

/** Signs the ticket that opens a game's streams (`createStreamTicketSigner` of @flaplab/identity). */
export interface StreamTicketIssuer {
  sign(gameId: string, username: string): Promise<{ readonly ticket: string }>;
}

export interface InitiatorDeps {
  readonly worldgen: Client<typeof WorldGenService>;
  readonly engine: Client<typeof EngineService>;
  readonly endpoints: StreamEndpoints;
  /** Issues the stream ticket of each game, for the player who started it. */
  readonly tickets: StreamTicketIssuer;
  readonly newGameId?: () => string;
}

/**
 * StartGame: a game id, a world from the world generator, then the game in the engine (owned by
 * the caller), then a stream ticket naming the game and the caller: the client opens the game's
 * streams with it.
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
      const started = await deps.engine.startGame({ gameId, world, bird });
      const { ticket } = await deps.tickets.sign(gameId, username);
      return {
        gameId,
        seed: world.seed,
        engineUrl: deps.endpoints.engineUrl,
        musicUrl: deps.endpoints.musicUrl,
        engineWsUrl: deps.endpoints.engineWsUrl,
        musicWsUrl: deps.endpoints.musicWsUrl,
        pipesInView: started.pipesInView,
        streamTicket: ticket,
      };
    },
  };
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
