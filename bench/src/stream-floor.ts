// Child process for section 3b's loopback floor: what this machine gives a stream server that does
// nothing but send. Plain TCP, no WebSocket, no engine: each accepted connection is a "game" whose
// first byte from its client starts it on the engine's TickScheduler (the server's clock, with its
// 1 ms slots), and every tick writes one 18-byte message (a tick frame's size with its WebSocket
// header) to its socket, as the WebSocket session writes a frame. It answers the requests of
// stream-server.ts ("start", "games", "reset", "stats", "clear"), so section 3b steps it like a link.
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { ScheduledTask, TickTarget } from "@flaplab/engine";
import { serveRequests } from "./child.js";
import { measuringScheduler } from "./engine-harness.js";
import { ProcessMeter } from "./meter.js";
import type { StreamGame, StreamServerInfo, StreamServerStats } from "./stream-server.js";

export type StreamFloorRequest =
  | { type: "start" }
  | { type: "games"; count: number; prefix: string }
  | { type: "reset" }
  | { type: "stats" }
  | { type: "clear" };

/** Bytes of one floor message: a 16-byte tick frame and its 2-byte WebSocket header. */
export const FLOOR_MESSAGE_BYTES = 18;
/** What every message says: a binary WebSocket frame's header and 16 zero bytes. */
const TEMPLATE = Buffer.concat([Buffer.of(0x82, FLOOR_MESSAGE_BYTES - 2), Buffer.alloc(FLOOR_MESSAGE_BYTES - 2)]);

const { scheduler } = measuringScheduler();
const sockets = new Set<Socket>();
let server: Server | undefined;
const meter = new ProcessMeter();

/** One connection's ticks: a message a tick until the socket ends. */
class FloorGame implements TickTarget {
  task: ScheduledTask | undefined;
  constructor(private readonly socket: Socket) {}

  onTick(): boolean {
    const socket = this.socket;
    if (socket.destroyed || !socket.writable) return false;
    // A buffer of its own per message, as the WebSocket session's sendFrom makes one per frame.
    const message = Buffer.allocUnsafe(FLOOR_MESSAGE_BYTES);
    TEMPLATE.copy(message);
    socket.write(message);
    return true;
  }
}

function accept(socket: Socket): void {
  socket.setNoDelay(true);
  sockets.add(socket);
  const game = new FloorGame(socket);
  socket.on("data", () => {
    // The client's first byte starts the game, as a start press does; later bytes are ignored.
    game.task ??= scheduler.schedule(game);
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    game.task?.cancel();
    sockets.delete(socket);
  });
}

serveRequests(
  async (req: StreamFloorRequest) => {
    switch (req.type) {
      case "start": {
        server = createServer(accept);
        await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
        const url = `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`;
        return { url, wsUrl: url, certSha256: "", transports: "tcp" } satisfies StreamServerInfo;
      }
      case "games":
        // Nothing to make: any connection is a game. The ids only name the clients' connections.
        return Array.from({ length: req.count }, (_, i) => ({ id: `${req.prefix}-${i}`, ticket: "" })) satisfies StreamGame[];
      case "reset":
        (globalThis as { gc?: () => void }).gc?.();
        scheduler.resetStats();
        meter.reset();
        return null;
      case "stats": {
        const { cpuUs, wallMs, gc } = meter.read();
        return {
          lateness: scheduler.lateness.summary(),
          ticks: scheduler.ticks,
          skipped: scheduler.skipped,
          cpuUs,
          wallMs,
          openSessions: sockets.size,
          games: sockets.size,
          gc,
          longestBurstMs: scheduler.longestBurstMs,
        } satisfies StreamServerStats;
      }
      case "clear":
        for (const socket of sockets) socket.destroy();
        return null;
    }
  },
  async () => {
    scheduler.stop();
    for (const socket of sockets) socket.destroy();
    server?.close();
  },
);
