// What a game tells its user as it happens: the events of a latency log, each with its time.
import type { Frame, GameSummary, InputAck, Moved } from "@flaplab/contracts/engine/v1/stream_pb";
import type { SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import type { ClientView } from "@flaplab/game-protocol";
import type { SessionEnd, StreamKind } from "./connection.js";

/** How the game's stream came back: it moved (Moved), or it was resumed (ResumeGame). */
export type Reconnection = "moved" | "resumed";

/**
 * Event hooks, all optional; `time` is the client's clock (`now`, performance.now() by default)
 * when the bytes were read or written, `bytes` what the message took on the stream. A hook must
 * not throw; the game does not wait for it.
 */
export interface GameHooks {
  /** An input was written (seq 1 is the start input). */
  inputSent?(seq: number, time: number, bytes: number): void;
  /** A tick frame arrived; `view` is its decoded picture unless views are off. */
  frame?(frame: Frame, view: ClientView | undefined, time: number, bytes: number): void;
  /** An input ack arrived: the engine applied input `ack.seq`. */
  ack?(ack: InputAck, view: ClientView | undefined, time: number, bytes: number): void;
  /** The first tick frame that reflects input `seq` (its effect is on screen). */
  effect?(seq: number, tick: number, time: number): void;
  /** A sound clip arrived on the music stream. */
  audio?(clip: SoundClip, time: number, bytes: number): void;
  summary?(summary: GameSummary, time: number, bytes: number): void;
  /** The engine said the game moved; the client follows it. */
  moved?(moved: Moved, time: number, bytes: number): void;
  /** A stream session opened (`reopened`: where the game continues) after `ms`. */
  opened?(kind: StreamKind, via: string, startedAt: number, ms: number, reopened: Reconnection | undefined, attempts: number): void;
  /** The game's stream is gone and a new one is being found (`lastTick`: the last tick seen). */
  interrupted?(kind: Reconnection, lastTick: number, time: number): void;
  /** A stream session ended (`byClient`: this client closed it). */
  ended?(kind: StreamKind, end: SessionEnd, byClient: boolean, time: number): void;
  /** "reconnecting…" while the game waits for an engine, undefined once it plays again. */
  status?(text: string | undefined): void;
  /** Something went wrong that the game survives or ends with. */
  error?(text: string): void;
  /** Something a player should be told while the game goes on (its music stream is lost). */
  notice?(text: string): void;
}
