// Child process for section 3b: headless WebTransport clients (the library's Node client, HTTP/2
// mapping), each playing one game with the flap schedule: a flap is sent when the frame before
// its tick arrives.
import { create } from "@bufbuild/protobuf";
import { ClientInputSchema, GameStreamMessageSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { DelimitedDecoder, encodeDelimited } from "@flaplab/game-stream";
import { loadWebTransport } from "@flaplab/streams";
import { findFlapSchedule } from "./autopilot.js";
import { serveRequests } from "./child.js";
import { Hist, type Percentiles } from "./hist.js";
import type { StreamGame } from "./stream-server.js";

export type StreamClientsRequest =
  | { type: "open"; url: string; certSha256: string; games: readonly StreamGame[]; concurrency: number }
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
  /** Sessions closed by the server since the last "open", by close code and reason. */
  readonly closedByServer: Record<string, number>;
  readonly cpuUs: number;
  readonly wallMs: number;
}

interface Wt {
  ready: Promise<unknown>;
  closed: Promise<{ closeCode?: number; reason?: string }>;
  close(info?: { closeCode: number; reason: string }): void;
  createBidirectionalStream(): Promise<{ readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> }>;
}

const flaps = new Set(findFlapSchedule().flapTicks);
interface Player {
  readonly wt: Wt;
  done: boolean;
  /** Sends the start press. */
  start?: () => void;
}

const open: Player[] = [];
let frames = 0;
let acks = 0;
let interArrival = new Hist();
let closedByServer: Record<string, number> = {};
let cpu0 = process.cpuUsage();
let t0 = performance.now();
let closing = false;

const input = (seq: number) => encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: Date.now() }));

async function play(url: string, certHash: Uint8Array, game: StreamGame): Promise<void> {
  const { lib } = await loadWebTransport();
  const gameId = game.id;
  const wt = new lib.WebTransport(`${url}?${new URLSearchParams({ gameId, ticket: game.ticket })}`, {
    forceReliable: true,
    serverCertificateHashes: [{ algorithm: "sha-256", value: certHash }],
  } as never) as unknown as Wt;
  const entry: Player = { wt, done: false };
  open.push(entry);
  wt.closed.then(
    (info) => {
      entry.done = true;
      const key = `${info?.closeCode ?? 0} ${info?.reason ?? ""}`.trim();
      if (!closing) closedByServer[key] = (closedByServer[key] ?? 0) + 1;
    },
    () => {
      entry.done = true;
      if (!closing) closedByServer["error"] = (closedByServer["error"] ?? 0) + 1;
    },
  );
  await wt.ready;
  const bidi = await wt.createBidirectionalStream();
  const writer = bidi.writable.getWriter();
  const reader = bidi.readable.getReader();
  let seq = 1;
  entry.start = () => void writer.write(input(seq)).catch(() => undefined);
  void (async () => {
    const dec = new DelimitedDecoder(GameStreamMessageSchema);
    let last = 0;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const msg of dec.push(value)) {
          if (msg.kind.case === "ack") {
            acks++;
            continue;
          }
          if (msg.kind.case !== "frame") continue;
          const frame = msg.kind.value;
          frames++;
          const now = performance.now();
          if (last > 0) interArrival.record((now - last) * 1000);
          last = now;
          if (flaps.has(frame.tick + 1)) void writer.write(input(++seq)).catch(() => undefined);
        }
      }
    } catch {
      // the session ended
    }
  })();
}

serveRequests(async (req: StreamClientsRequest) => {
  switch (req.type) {
    case "open": {
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
            await play(req.url, hash, game).catch((err: unknown) => {
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
      cpu0 = process.cpuUsage();
      t0 = performance.now();
      return null;
    case "stats": {
      const cpu = process.cpuUsage(cpu0);
      return {
        frames,
        acks,
        interArrival: interArrival.summary(),
        closedByServer,
        cpuUs: cpu.user + cpu.system,
        wallMs: performance.now() - t0,
      } satisfies ClientStats;
    }
    case "close": {
      closing = true;
      for (const { wt, done } of open) {
        if (done) continue;
        try {
          wt.close({ closeCode: 0, reason: "benchmark step over" });
        } catch {
          // already closed
        }
      }
      await Promise.race([Promise.all(open.map((o) => o.wt.closed.catch(() => undefined))), new Promise((r) => setTimeout(r, 5000))]);
      open.length = 0;
      return null;
    }
  }
});
