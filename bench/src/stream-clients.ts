// Child process for section 3b: headless stream clients, each playing one game with the flap
// schedule (a flap is sent when the frame before its tick arrives), over WebTransport (the
// library's Node client, HTTP/2 mapping) or plain WebSocket (the ws client).
import { create } from "@bufbuild/protobuf";
import { ClientInputSchema, GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { DelimitedDecoder, encodeDelimited } from "@flaplab/game-protocol";
import { loadWebTransport } from "@flaplab/stream-servers";
import { FlapBot, planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { serveRequests } from "./child.js";
import { LatencyHistogram, type Stats } from "@flaplab/report-kit/latency";
import { WebSocket } from "ws";
import { Hist, type Percentiles } from "./hist.js";
import { ProcessMeter } from "./meter.js";
import type { StreamGame } from "./stream-server.js";

export type StreamClientsRequest =
  | {
      type: "open";
      link: StreamLink;
      url: string;
      certSha256: string;
      games: readonly StreamGame[];
      concurrency: number;
      /** The flap schedule: the Go clients take it from here; these clients plan their own. */
      flapTicks?: readonly number[];
    }
  | { type: "start"; rampMs: number }
  | { type: "reset" }
  | { type: "stats" }
  | { type: "close" };

export interface OpenResult {
  readonly opened: number;
  readonly failed: number;
  readonly firstError: string | null;
  readonly openMs: number;
}

export interface ClientStats {
  readonly frames: number;
  readonly acks: number;
  /** Tick-frame inter-arrival per game, µs. */
  readonly interArrival: Percentiles;
  /** Tick-frame inter-arrival per game, ms, as every latency table shows it. */
  readonly interArrivalStats: Stats;
  /** Input written → its input ack read, ms. */
  readonly inputToAck: Stats;
  /** Sessions closed by the server since the last "open", by close code and reason. */
  readonly closedByServer: Record<string, number>;
  readonly cpuUs: number;
  readonly wallMs: number;
}

/** The client links; "tcp" is the loopback floor's plain TCP, which only the Go clients play. */
export type StreamLink = "webtransport" | "websocket" | "tcp";

interface Wt {
  ready: Promise<unknown>;
  closed: Promise<{ closeCode?: number; reason?: string }>;
  close(info?: { closeCode: number; reason: string }): void;
  createBidirectionalStream(): Promise<{ readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> }>;
}

const bot = new FlapBot(planSurvival(EASY_SEED).flapTicks);
interface Player {
  done: boolean;
  /** Resolves once the session has ended. */
  readonly ended: Promise<unknown>;
  /** Sends the start press. */
  start?: () => void;
  close(): void;
}

const open: Player[] = [];
let frames = 0;
let acks = 0;
let interArrival = new Hist();
let interArrivalMs = new LatencyHistogram();
let inputToAck = new LatencyHistogram();
let closedByServer: Record<string, number> = {};
const meter = new ProcessMeter();
let closing = false;

const input = (seq: number) => encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: Date.now() }));

/** Counts the messages of one game's stream and answers its frames with the flap schedule's inputs. */
function gameReader(send: (seq: number) => void): (bytes: Uint8Array) => void {
  const dec = new DelimitedDecoder(GameStreamMessageSchema);
  let last = 0;
  let seq = 1;
  let sentAt = 0;
  return (bytes) => {
    for (const msg of dec.push(bytes)) {
      const now = performance.now();
      if (msg.kind.case === "ack") {
        acks++;
        if (sentAt > 0) inputToAck.record(now - sentAt);
        sentAt = 0;
        continue;
      }
      if (msg.kind.case !== "frame") continue;
      frames++;
      if (last > 0) {
        interArrival.record((now - last) * 1000);
        interArrivalMs.record(now - last);
      }
      last = now;
      if (bot.pressOnFrame(msg.kind.value.tick)) {
        sentAt = performance.now();
        send(++seq);
      }
    }
  };
}

function ended(entry: Player, code: number | string, reason: string): void {
  entry.done = true;
  const key = `${code} ${reason}`.trim();
  if (!closing) closedByServer[key] = (closedByServer[key] ?? 0) + 1;
}

async function playWebTransport(url: string, certHash: Uint8Array, game: StreamGame): Promise<void> {
  const { lib } = await loadWebTransport();
  const gameId = game.id;
  const wt = new lib.WebTransport(`${url}?${new URLSearchParams({ gameId, ticket: game.ticket })}`, {
    forceReliable: true,
    serverCertificateHashes: [{ algorithm: "sha-256", value: certHash }],
  } as never) as unknown as Wt;
  const entry: Player = {
    done: false,
    ended: wt.closed.catch(() => undefined),
    close: () => {
      try {
        wt.close({ closeCode: 0, reason: "benchmark step over" });
      } catch {
        // already closed
      }
    },
  };
  open.push(entry);
  wt.closed.then(
    (info) => ended(entry, info?.closeCode ?? 0, info?.reason ?? ""),
    () => ended(entry, "error", ""),
  );
  await wt.ready;
  const bidi = await wt.createBidirectionalStream();
  const writer = bidi.writable.getWriter();
  const reader = bidi.readable.getReader();
  const send = (seq: number) => void writer.write(input(seq)).catch(() => undefined);
  entry.start = () => send(1);
  const read = gameReader(send);
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        read(value);
      }
    } catch {
      // the session ended
    }
  })();
}

async function playWebSocket(url: string, game: StreamGame): Promise<void> {
  const ws = new WebSocket(`${url}?${new URLSearchParams({ gameId: game.id, ticket: game.ticket })}`, { perMessageDeflate: false });
  const entry: Player = {
    done: false,
    ended: new Promise((resolve) => ws.once("close", resolve)),
    close: () => ws.close(1000, "benchmark step over"),
  };
  open.push(entry);
  ws.once("close", (code, reason) => ended(entry, code === 1000 ? 0 : code, reason.toString()));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.on("error", () => undefined);
  const send = (seq: number) => ws.send(input(seq));
  entry.start = () => send(1);
  const read = gameReader(send);
  ws.on("message", (data: Buffer) => read(data));
}

serveRequests(async (req: StreamClientsRequest) => {
  switch (req.type) {
    case "open": {
      if (req.link === "tcp") throw new Error("the loopback floor's plain TCP is played by the Go clients (go-stream-clients), not these");
      closing = false;
      closedByServer = {};
      const hash = new Uint8Array(Buffer.from(req.certSha256, "base64"));
      const started = performance.now();
      let failed = 0;
      let firstError: string | null = null;
      let next = 0;
      // A few handshakes at a time; the games start later, all together, with "start".
      await Promise.all(
        Array.from({ length: Math.max(1, req.concurrency) }, async () => {
          while (next < req.games.length) {
            const game = req.games[next++]!;
            const playing = req.link === "websocket" ? playWebSocket(req.url, game) : playWebTransport(req.url, hash, game);
            await playing.catch((err: unknown) => {
              failed++;
              firstError ??= err instanceof Error ? err.message : String(err);
            });
          }
        }),
      );
      return { opened: req.games.length - failed, failed, firstError, openMs: performance.now() - started } satisfies OpenResult;
    }
    case "start": {
      // Start presses spread evenly over the ramp, so the games' tick phases spread over the period.
      const players = open.filter((p) => !p.done && p.start);
      const started = performance.now();
      for (let i = 0; i < players.length; i++) {
        const wait = started + (i * req.rampMs) / players.length - performance.now();
        await new Promise((r) => (wait > 1 ? setTimeout(r, wait) : setImmediate(r)));
        players[i]!.start!();
      }
      return players.length;
    }
    case "reset":
      frames = 0;
      acks = 0;
      interArrival = new Hist();
      interArrivalMs = new LatencyHistogram();
      inputToAck = new LatencyHistogram();
      meter.reset();
      return null;
    case "stats": {
      const { cpuUs, wallMs } = meter.read();
      return {
        frames,
        acks,
        interArrival: interArrival.summary(),
        interArrivalStats: interArrivalMs.stats(),
        inputToAck: inputToAck.stats(),
        closedByServer,
        cpuUs,
        wallMs,
      } satisfies ClientStats;
    }
    case "close": {
      closing = true;
      for (const player of open) if (!player.done) player.close();
      await Promise.race([Promise.all(open.map((o) => o.ended)), new Promise((r) => setTimeout(r, 5000))]);
      open.length = 0;
      return null;
    }
  }
});
