// Child process for section 3b: headless stream clients, each playing one game with the flap
// schedule (a flap is sent when the frame before its tick arrives), over WebTransport (the
// library's Node client, HTTP/2 mapping) or plain WebSocket (the ws client): @flaplab/game-client's
// GameStream, frames not decoded into views.
import { type Connector, GameStream, type GameHooks, nodeWebTransportConnector, type SessionEnd, wsConnector } from "@flaplab/game-client/node";
import { FlapBot, planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { serveRequests } from "./child.js";
import { LatencyHistogram, type Stats } from "@flaplab/report-kit/latency";
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

const bot = new FlapBot(planSurvival(EASY_SEED).flapTicks);
const pressBefore = (tick: number) => bot.flapsBefore(tick);

const open: GameStream[] = [];
let frames = 0;
let acks = 0;
let interArrival = new Hist();
let interArrivalMs = new LatencyHistogram();
let inputToAck = new LatencyHistogram();
let closedByServer: Record<string, number> = {};
const meter = new ProcessMeter();
let closing = false;

function ended(end: SessionEnd, byClient: boolean): void {
  if (byClient || closing) return;
  const key = (end.failed ? "error" : `${end.code} ${end.reason}`).trim();
  closedByServer[key] = (closedByServer[key] ?? 0) + 1;
}

/** One game's hooks: counts its messages and times its tick frames and its inputs' acks. */
function hooksOf(): GameHooks {
  let last = 0;
  let sentAt = 0;
  return {
    inputSent: (seq, time) => {
      if (seq > 1) sentAt = time;
    },
    ack: (_ack, _view, time) => {
      acks++;
      if (sentAt > 0) inputToAck.record(time - sentAt);
      sentAt = 0;
    },
    frame: (_frame, _view, time) => {
      frames++;
      if (last > 0) {
        interArrival.record((time - last) * 1000);
        interArrivalMs.record(time - last);
      }
      last = time;
    },
    ended: (_kind, end, byClient) => ended(end, byClient),
  };
}

/** Opens one game's stream (not started: "start" sends the start inputs). */
async function openGame(connect: Connector, link: "webtransport" | "websocket", url: string, game: StreamGame): Promise<void> {
  const stream = new GameStream({
    gameId: game.id,
    home: { engineUrl: url, engineWsUrl: url, streamTicket: game.ticket },
    link,
    connect,
    views: false,
    pressBefore,
    hooks: hooksOf(),
  });
  await stream.open();
  open.push(stream);
}

serveRequests(async (req: StreamClientsRequest) => {
  switch (req.type) {
    case "open": {
      if (req.link === "tcp") throw new Error("the loopback floor's plain TCP is played by the Go clients (go-stream-clients), not these");
      closing = false;
      closedByServer = {};
      const link = req.link;
      const connect = link === "websocket" ? wsConnector() : nodeWebTransportConnector(new Uint8Array(Buffer.from(req.certSha256, "base64")));
      const started = performance.now();
      let failed = 0;
      let firstError: string | null = null;
      let next = 0;
      // A few handshakes at a time; the games start later, all together, with "start".
      await Promise.all(
        Array.from({ length: Math.max(1, req.concurrency) }, async () => {
          while (next < req.games.length) {
            const game = req.games[next++]!;
            await openGame(connect, link, req.url, game).catch((err: unknown) => {
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
      const players = open.filter((p) => !p.isOver);
      const started = performance.now();
      for (let i = 0; i < players.length; i++) {
        const wait = started + (i * req.rampMs) / players.length - performance.now();
        await new Promise((r) => (wait > 1 ? setTimeout(r, wait) : setImmediate(r)));
        players[i]!.start();
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
      const sessions = open.flatMap((game) => (game.session ? [game.session.ended] : []));
      for (const game of open) game.close("benchmark step over");
      await Promise.race([Promise.all(sessions), new Promise((r) => setTimeout(r, 5000))]);
      open.length = 0;
      return null;
    }
  }
});
