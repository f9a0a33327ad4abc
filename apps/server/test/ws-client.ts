// A game played over the plain WebSocket link with the ws client, for the server's tests.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ClientInputSchema, GameStreamMessageSchema, type GameSummary } from "@flaplab/contracts/engine/v1/stream_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { DelimitedDecoder, encodeDelimited, FrameDecoder } from "@flaplab/game-protocol";
import { WebSocket } from "ws";

/** The flap ticks that score 7 at tick 402 on the easy seed. */
export const EASY_SEED = 6977347407732442987n;
export const EASY_FLAP_TICKS = [42, 53, 67, 85, 103, 128, 140, 204, 232, 266, 275, 292, 322, 349];

export const input = (seq: number) => encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: Date.now() }));

export function startGame(baseUrl: string, token: string, seed?: bigint) {
  const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  return initiator.startGame({ seed }, { headers: { authorization: `Bearer ${token}` } });
}

export interface Link {
  readonly ws: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** Opens `base?query` and resolves once it is open; `onMessage` gets every binary message. */
export async function openLink(base: string, query: Record<string, string>, onMessage: (bytes: Uint8Array) => void = () => {}): Promise<Link> {
  const ws = new WebSocket(`${base}?${new URLSearchParams(query)}`);
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.once("close", (code, reason) => r({ code, reason: reason.toString() })));
  ws.on("message", (data: Buffer) => onMessage(data));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, closed };
}

/** The HTTP status an upgrade was refused with. */
export function refusal(base: string, query: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base}?${new URLSearchParams(query)}`);
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("open", () => reject(new Error("the upgrade was accepted")));
    ws.on("error", () => undefined);
  });
}

/** Plays a game on its engine WebSocket with `flapTicks`, to its end. */
export async function playOver(
  engineWsUrl: string,
  query: Record<string, string>,
  flapTicks: readonly number[],
): Promise<{ score: number; lastTick: number; acks: number; summary: GameSummary | undefined; close: { code: number; reason: string } }> {
  const dec = new DelimitedDecoder(GameStreamMessageSchema);
  const view = new FrameDecoder();
  let seq = 1;
  let lastTick = 0;
  let score = 0;
  let acks = 0;
  let summary: GameSummary | undefined;
  const engine: Link = await openLink(engineWsUrl, query, (bytes) => {
    for (const msg of dec.push(bytes)) {
      if (msg.kind.case === "summary") summary = msg.kind.value;
      if (msg.kind.case === "ack") {
        view.applyAck(msg.kind.value);
        acks++;
      }
      if (msg.kind.case !== "frame") continue;
      const v = view.apply(msg.kind.value);
      lastTick = v.tick;
      score = v.score;
      if (flapTicks.includes(v.tick + 1)) engine.ws.send(input(++seq));
    }
  });
  engine.ws.send(input(1));
  const close = await engine.closed;
  return { score, lastTick, acks, summary, close };
}
