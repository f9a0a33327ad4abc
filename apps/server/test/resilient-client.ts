// A player's client that survives its engine: it follows Moved, resumes after a broken stream, and
// decides every press on the game's tick clock (a press meant before tick T keeps its seq when it
// is sent again), as the web page and the replay runner do. For the server's failover tests.
import { type Client, ConnectError } from "@connectrpc/connect";
import { type GameSummary, GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import type { InitiatorService, StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { DelimitedDecoder, FrameDecoder } from "@flaplab/game-protocol";
import { WebSocket } from "ws";
import { input } from "./ws-client.js";

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

export interface PlayedGame {
  readonly gameId: string;
  readonly score: number;
  readonly lastTick: number;
  readonly summary: GameSummary | undefined;
  readonly interruptions: readonly Interruption[];
  /** How often each seq was acked, over every stream of the game. */
  readonly acks: ReadonlyMap<number, number>;
  /** Presses sent again (same seq) after a move or resume. */
  readonly resent: number;
  /** Engine WebSocket URLs the game was played at, in order. */
  readonly engines: readonly string[];
}

export interface PlayOptions {
  readonly initiator: Client<typeof InitiatorService>;
  readonly token: string;
  readonly flapTicks: readonly number[];
  /** Called with the engine WebSocket URL of every stream it opens. */
  readonly onEngine?: (wsUrl: string) => void;
  /** Called with every tick frame (after the client acted on it). */
  readonly onTick?: (tick: number) => void;
  /** Longest wait for an answer from ResumeGame, ms (default 5000). */
  readonly resumeTimeoutMs?: number;
}

/** Plays a started game to its end across moves and engine failures. */
export async function playThrough(start: StartGameResponse, options: PlayOptions): Promise<PlayedGame> {
  const flaps = new Set(options.flapTicks);
  const seqFor = new Map<number, number>();
  const acks = new Map<number, number>();
  const interruptions: Interruption[] = [];
  const engines: string[] = [];
  const auth = { headers: { authorization: `Bearer ${options.token}` } };
  let target = { url: start.engineWsUrl, ticket: start.streamTicket };
  let nextSeq = 1;
  let resent = 0;
  let lastTick = 0;
  let score = 0;
  let lastFrameAt = 0;
  let summary: GameSummary | undefined;
  let started = false;
  let interruptionAfter: { kind: Interruption["kind"]; fromTick: number; endedAt: number; lastFrameAt: number } | undefined;
  for (;;) {
    engines.push(target.url);
    options.onEngine?.(target.url);
    const decoder = new DelimitedDecoder(GameStreamMessageSchema);
    /** A stream of a game that already played: the engine's first frame is a full one to answer. */
    let reopened = started;
    // Seqs sent on this stream: each goes once per stream (a repeat would break the protocol).
    const sentHere = new Set<number>();
    const send = (seqs: readonly number[]) => {
      const fresh = seqs.filter((q) => !sentHere.has(q));
      for (const q of fresh) sentHere.add(q);
      if (fresh.length > 0) ws.send(Buffer.concat(fresh.map((q) => input(q))));
    };
    const view = new FrameDecoder();
    let moved: { url: string; ticket: string } | undefined;
    let pending: { kind: Interruption["kind"]; fromTick: number; endedAt: number; lastFrameAt: number } | undefined = interruptionAfter;
    const ws = new WebSocket(`${target.url}?${new URLSearchParams({ gameId: start.gameId, ticket: target.ticket })}`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() }));
      ws.once("error", (err) => resolve({ code: 1006, reason: err.message }));
    });
    ws.on("message", (bytes: Buffer) => {
      for (const msg of decoder.push(bytes)) {
        if (msg.kind.case === "summary") summary = msg.kind.value;
        if (msg.kind.case === "moved") {
          // Nothing more comes on this stream: go at once rather than wait for its close.
          moved = { url: msg.kind.value.engineWsUrl, ticket: msg.kind.value.streamTicket };
          ws.terminate();
          return;
        }
        if (msg.kind.case === "ack") {
          view.applyAck(msg.kind.value);
          acks.set(msg.kind.value.seq, (acks.get(msg.kind.value.seq) ?? 0) + 1);
        }
        if (msg.kind.case !== "frame") continue;
        const v = view.apply(msg.kind.value);
        const now = performance.now();
        if (msg.kind.value.full && reopened) {
          // The continued game's full frame: every press meant for a later tick, else the latest.
          reopened = false;
          const pending = [...seqFor.entries()].filter(([tick]) => tick > v.tick).map(([, q]) => q);
          resent += pending.length;
          send(pending.length > 0 ? pending.sort((x, y) => x - y) : [nextSeq]);
        }
        if (pending && v.tick > pending.fromTick) {
          interruptions.push({
            kind: pending.kind,
            fromTick: pending.fromTick,
            atTick: v.tick,
            pauseMs: now - pending.lastFrameAt,
            reconnectMs: now - pending.endedAt,
            endedAt: pending.endedAt,
            frameAt: now,
          });
          pending = undefined;
        }
        lastTick = v.tick;
        score = v.score;
        lastFrameAt = now;
        // The press meant before tick T+1: its seq once chosen, so a re-sent press is applied once.
        if (flaps.has(v.tick + 1)) {
          let seq = seqFor.get(v.tick + 1);
          if (seq === undefined) seqFor.set(v.tick + 1, (seq = ++nextSeq));
          else if (!sentHere.has(seq)) resent++;
          send([seq]);
        }
        options.onTick?.(v.tick);
      }
    });
    ws.once("open", () => {
      if (started) return;
      started = true;
      send([1]);
    });
    // A stream that never opens (the engine it was sent to is gone too) ends like a broken one: resume.
    const end = await closed;
    if (end.code === 1000) break;
    const endedAt = performance.now();
    if (moved) {
      target = moved;
      interruptionAfter = { kind: "moved", fromTick: lastTick, endedAt, lastFrameAt };
      continue;
    }
    // The engine went away: ask the initiator to continue the game on a live engine.
    interruptionAfter = { kind: "resumed", fromTick: lastTick, endedAt, lastFrameAt };
    const deadline = endedAt + (options.resumeTimeoutMs ?? 5000);
    for (;;) {
      try {
        const resumed = await options.initiator.resumeGame({ gameId: start.gameId }, auth);
        target = { url: resumed.game!.engineWsUrl, ticket: resumed.game!.streamTicket };
        break;
      } catch (err) {
        if (performance.now() > deadline) throw new Error(`game ${start.gameId}: ResumeGame failed after ${end.code} ${end.reason}: ${ConnectError.from(err).message}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  return { gameId: start.gameId, score, lastTick, summary, interruptions, acks, resent, engines };
}
