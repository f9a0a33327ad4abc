// The server tests' games, played with @flaplab/game-client: whole games to their end, games that
// survive their engine, and single stream sessions for the tests that send their own bytes.
import type { GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import type { StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import {
  type Connector,
  encodeInput,
  Game,
  GameApi,
  nodeConnectTransport,
  nodeWebTransportConnector,
  type SessionEnd,
  type StreamConnection,
  StreamOpenError,
  wsConnector,
} from "@flaplab/game-client/node";

/** The published easy seed, and the ticks before which its trace flaps: score 7 at tick 402. */
export const EASY_SEED = 6977347407732442987n;
export const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];

/** A size-delimited ClientInput with `seq`, for tests that write their own bytes. */
export const input = (seq: number): Uint8Array => encodeInput(seq, Date.now());

/** StartGame at `baseUrl` as the player of `token`. */
export function startGame(baseUrl: string, token: string, seed?: bigint): Promise<StartGameResponse> {
  const transport = nodeConnectTransport(baseUrl);
  return new GameApi({ auth: transport, initiator: transport, token: () => token }).startGame(seed === undefined ? {} : { seed });
}

/** `base?query`, the URL of one stream session. */
function urlOf(base: string, query: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}

/** One open stream session; `closed` is how it ended, `open` whether it has not yet. */
export interface Link {
  readonly connection: StreamConnection;
  send(bytes: Uint8Array): boolean;
  close(code?: number, reason?: string): void;
  readonly closed: Promise<SessionEnd>;
  open(): boolean;
}

function linkOf(connection: StreamConnection, onMessage: (bytes: Uint8Array) => void): Link {
  let ended = false;
  const closed = connection.ended.then((end) => {
    ended = true;
    return end;
  });
  connection.read(onMessage);
  return { connection, send: (b) => connection.send(b), close: (c, r) => connection.close(c, r), closed, open: () => !ended };
}

/** Opens a plain WebSocket session at `base?query`; `onMessage` gets every chunk the server sends. */
export async function openLink(base: string, query: Record<string, string>, onMessage: (bytes: Uint8Array) => void = () => {}): Promise<Link> {
  return linkOf(await wsConnector()("game", urlOf(base, query)), onMessage);
}

/** Opens a WebTransport session at `url?query`, trusting the certificate of `certSha256`. */
export async function openStream(url: string, query: Record<string, string>, certSha256: Uint8Array, onMessage: (bytes: Uint8Array) => void = () => {}): Promise<Link> {
  return linkOf(await nodeWebTransportConnector(certSha256)("game", urlOf(url, query)), onMessage);
}

/** The HTTP status a WebSocket upgrade at `base?query` was refused with. */
export async function refusal(base: string, query: Record<string, string>): Promise<number> {
  const link = await wsConnector()("game", urlOf(base, query)).catch((err: unknown) => err);
  if (link instanceof StreamOpenError && link.status !== undefined) return link.status;
  if (link instanceof Error) throw link;
  (link as StreamConnection).close();
  throw new Error("the upgrade was accepted");
}

/**
 * What the server does with a WebTransport session: "refused" when it is turned away before it
 * opens, else the code and reason it is closed with (-1: still open after `ms`, i.e. admitted; the
 * session is then closed here).
 */
export async function attempt(
  url: string,
  query: Record<string, string>,
  certSha256: Uint8Array,
  ms = 3000,
): Promise<{ refused: true; reason: string } | { refused: false; closeCode: number; reason: string }> {
  let connection: StreamConnection;
  try {
    connection = await nodeWebTransportConnector(certSha256)("game", urlOf(url, query));
  } catch (err) {
    // Closed with a code right after it was accepted: admitted, then shut by the handler.
    const closed = /stream (?:closed|: cannot open a bidirectional stream): (\d+) (.*)$/.exec((err as Error).message);
    if (closed) return { refused: false, closeCode: Number(closed[1]), reason: closed[2]! };
    return { refused: true, reason: (err as Error).message };
  }
  const end = await Promise.race([connection.ended, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);
  if (end === undefined) {
    connection.close();
    return { refused: false, closeCode: -1, reason: `still open after ${ms} ms` };
  }
  return { refused: false, closeCode: end.code, reason: end.reason };
}

export interface PlayedOver {
  readonly score: number;
  readonly lastTick: number;
  /** Tick frames and input acks received. */
  readonly frames: number;
  readonly acks: number;
  readonly summary: GameSummary | undefined;
  readonly clips: readonly SoundClip[];
  /** How the game stream ended. */
  readonly close: SessionEnd;
  readonly error: string | undefined;
}

export interface PlayOptions {
  readonly link?: "websocket" | "webtransport";
  /** The stream server's certificate hash, for WebTransport. */
  readonly certSha256?: Uint8Array;
  /** Open the music stream too (default false). */
  readonly music?: boolean;
  /** Runs at every tick frame. */
  readonly onTick?: (tick: number) => void;
}

type Started = Pick<StartGameResponse, "gameId" | "engineUrl" | "engineWsUrl" | "streamTicket" | "musicUrl" | "musicWsUrl" | "seed">;

/**
 * Opens a started game's streams (the music stream first, with `music`); `play()` then plays it
 * to its end, flapping before each of `flapTicks`.
 */
export async function openGame(start: Started, flapTicks: readonly number[], options: PlayOptions = {}): Promise<{ play(): Promise<PlayedOver> }> {
  const link = options.link ?? "websocket";
  const connect: Connector = link === "websocket" ? wsConnector() : nodeWebTransportConnector(options.certSha256!);
  const flaps = new Set(flapTicks);
  let frames = 0;
  let acks = 0;
  const clips: SoundClip[] = [];
  let close: SessionEnd | undefined;
  let ended!: () => void;
  const gameEnded = new Promise<void>((r) => (ended = r));
  const game = new Game({
    start,
    link,
    connect,
    music: options.music ?? false,
    pressBefore: (tick) => flaps.has(tick),
    hooks: {
      ack: () => acks++,
      audio: (clip) => clips.push(clip),
      frame: (frame) => {
        frames++;
        options.onTick?.(frame.tick);
      },
      ended: (kind, end, byClient) => {
        if (kind !== "game") return;
        // The server's close, unless this client closed first.
        close = byClient ? (close ?? end) : end;
        ended();
      },
    },
  });
  await game.open();
  return {
    async play() {
      game.start();
      const result = await game.finished;
      await Promise.race([gameEnded, new Promise((r) => setTimeout(r, 5000))]);
      return {
        score: result.score,
        lastTick: result.ticks,
        frames,
        acks,
        summary: result.summary,
        clips,
        close: close ?? { code: -1, reason: "no close within 5 s", failed: true },
        error: result.error,
      };
    },
  };
}

/** Plays a started game to its end: `openGame`, then `play`. */
export async function playOver(start: Started, flapTicks: readonly number[], options: PlayOptions = {}): Promise<PlayedOver> {
  return (await openGame(start, flapTicks, options)).play();
}

/** A pause in a game that survived its engine. */
export interface Interruption {
  readonly kind: "moved" | "resumed";
  /** The last tick seen before, and the tick the game continued from. */
  readonly fromTick: number;
  readonly atTick: number;
  /** From the last frame before to the first frame of a new tick after, ms. */
  readonly pauseMs: number;
  /** From the stream's end to the first frame after, ms. */
  readonly reconnectMs: number;
  /** When the stream ended and when the first frame of a new tick came (performance.now()). */
  readonly endedAt: number;
  readonly frameAt: number;
}

export interface PlayedThrough {
  readonly gameId: string;
  readonly score: number;
  readonly lastTick: number;
  readonly summary: GameSummary | undefined;
  readonly interruptions: readonly Interruption[];
  /** How often each seq was acked, over every stream of the game. */
  readonly acks: ReadonlyMap<number, number>;
  /** Inputs sent again after a move or resume. */
  readonly resent: number;
  /** Engine WebSocket URLs the game was played at, in order. */
  readonly engines: readonly string[];
}

export interface ThroughOptions {
  /** Where ResumeGame is asked, as the player of `token`. */
  readonly initiatorUrl: string;
  readonly token: string;
  readonly flapTicks: readonly number[];
  /** Called with the engine WebSocket URL of every stream it opens. */
  readonly onEngine?: (wsUrl: string) => void;
  /** Called with every tick frame (after the client acted on it). */
  readonly onTick?: (tick: number) => void;
}

/** Plays a started game over WebSocket to its end across moves (Moved) and engine failures (ResumeGame). */
export async function playThrough(start: StartGameResponse, options: ThroughOptions): Promise<PlayedThrough> {
  const transport = nodeConnectTransport(options.initiatorUrl);
  const api = new GameApi({ auth: transport, initiator: transport, token: () => options.token });
  const flaps = new Set(options.flapTicks);
  const acks = new Map<number, number>();
  const interruptions: Interruption[] = [];
  const engines: string[] = [];
  const ws = wsConnector();
  let lastFrameAt = 0;
  let pending: { kind: Interruption["kind"]; fromTick: number; endedAt: number; lastFrameAt: number } | undefined;
  const game = new Game({
    start,
    link: "websocket",
    music: false,
    connect: (kind, url) => {
      const base = url.split("?")[0]!;
      engines.push(base);
      options.onEngine?.(base);
      return ws(kind, url);
    },
    resume: (gameId) => api.resumeGame(gameId),
    pressBefore: (tick) => flaps.has(tick),
    hooks: {
      ack: (ack) => acks.set(ack.seq, (acks.get(ack.seq) ?? 0) + 1),
      interrupted: (kind, lastTick, time) => {
        pending = { kind, fromTick: lastTick, endedAt: time, lastFrameAt };
      },
      frame: (frame, _view, time) => {
        if (pending && frame.tick > pending.fromTick) {
          const { kind, fromTick, endedAt } = pending;
          interruptions.push({ kind, fromTick, atTick: frame.tick, pauseMs: time - pending.lastFrameAt, reconnectMs: time - endedAt, endedAt, frameAt: time });
          pending = undefined;
        }
        lastFrameAt = time;
        options.onTick?.(frame.tick);
      },
    },
  });
  const result = await game.play();
  if (result.error !== undefined) throw new Error(`game ${start.gameId}: ${result.error}`);
  return { gameId: start.gameId, score: result.score, lastTick: result.ticks, summary: result.summary, interruptions, acks, resent: result.resentInputs, engines };
}
