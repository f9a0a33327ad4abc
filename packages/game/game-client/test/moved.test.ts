// The hand-over of a game from a draining engine to another: two scripted engines on loopback
// WebSocket servers speak the game stream protocol with the real frame encoder; the first sends
// Moved, the second continues the game from an older snapshot.
import { create } from "@bufbuild/protobuf";
import { ClientInputSchema, type GameStreamMessage, GameStreamMessageSchema, GameSummarySchema, MovedSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { CloseCode, DelimitedDecoder, encodeDelimited, FrameEncoder, type FrameSource } from "@flaplab/game-protocol";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { GameStream, wsConnector } from "../src/node.js";

const COURSE = { pipeSpacing: 150, pipes: Array.from({ length: 10 }, (_, i) => ({ gapStart: 150 + 10 * i, gapHeight: 160 })), pipeWidth: 72, pipesInView: 3 };

function state(tick: number, over = false): FrameSource {
  return { tick, phase: over ? "over" : "playing", birdY: 200 + tick, score: tick >= 6 ? 1 : 0, pipeSpeed: 2, pipeWindowX: 2 * tick, closestPipe: 0, courseEnd: false };
}

const message = (kind: GameStreamMessage["kind"]) => encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind }));

/** A scripted engine: records the query and inputs of each stream and runs `script` on it. */
async function engine(script: (ws: WebSocket, inputs: number[]) => void) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((r) => server.once("listening", () => r()));
  const queries: URLSearchParams[] = [];
  const inputs: number[] = [];
  server.on("connection", (ws, req) => {
    queries.push(new URL(req.url ?? "/", "http://x").searchParams);
    const decoder = new DelimitedDecoder(ClientInputSchema);
    ws.on("message", (data: Buffer) => {
      for (const input of decoder.push(data)) inputs.push(input.seq);
    });
    script(ws, inputs);
  });
  const url = `ws://127.0.0.1:${(server.address() as { port: number }).port}/engine/v1/game`;
  return { url, queries, inputs, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const until = async (cond: () => boolean, what: string) => {
  for (const deadline = Date.now() + 5000; !cond(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("Moved", () => {
  it("follows the game to the new engine with its ticket, re-sends the press the continued game does not reflect, and ends there", async () => {
    // Engine B continues at tick 4 from a snapshot that reflects only the start input (seq 1).
    const b = await engine((ws, inputs) => {
      const encoder = new FrameEncoder(COURSE);
      void (async () => {
        ws.send(message({ case: "frame", value: encoder.encode(state(4), 1) }));
        await until(() => inputs.includes(2), "the re-sent press at engine B");
        ws.send(message({ case: "frame", value: encoder.encode(state(5), 2) }));
        ws.send(message({ case: "frame", value: encoder.encode(state(6, true), 2) }));
        ws.send(message({ case: "summary", value: create(GameSummarySchema, { score: 1, ticks: 6, recorded: true }) }));
        ws.close(1000, "game over");
      })();
    });
    // Engine A plays ticks 1–3, the client presses before tick 3, then A hands the game to B.
    const a = await engine((ws, inputs) => {
      const encoder = new FrameEncoder(COURSE);
      void (async () => {
        await until(() => inputs.includes(1), "the start input at engine A");
        ws.send(message({ case: "frame", value: encoder.encode(state(1), 1) }));
        ws.send(message({ case: "frame", value: encoder.encode(state(2), 1) }));
        await until(() => inputs.includes(2), "the press at engine A");
        ws.send(message({ case: "frame", value: encoder.encode(state(3), 2) }));
        ws.send(message({ case: "moved", value: create(MovedSchema, { engineUrl: "", engineWsUrl: b.url, streamTicket: "ticket-b", tick: 4 }) }));
        ws.close(CloseCode.Moved, "the game moved");
      })();
    });
    servers.push(a, b);
    const events: string[] = [];
    const game = new GameStream({
      gameId: "g1",
      home: { engineUrl: "", engineWsUrl: a.url, streamTicket: "ticket-a" },
      link: "websocket",
      connect: wsConnector(),
      pressBefore: (tick) => tick === 3,
      hooks: {
        moved: (moved) => events.push(`moved to tick ${moved.tick}`),
        interrupted: (kind, tick) => events.push(`${kind} after tick ${tick}`),
        opened: (_kind, _via, _at, _ms, reopened) => events.push(`opened${reopened ? ` (${reopened})` : ""}`),
        frame: (frame, view) => events.push(`tick ${frame.tick} score ${view?.score}`),
      },
    });
    await game.open();
    game.start();
    await game.done;
    expect(game.outcome()).toMatchObject({ completed: true, error: undefined, score: 1, ticks: 6, reconnections: 1, resentInputs: 1 });
    expect(a.queries.map((q) => [q.get("gameId"), q.get("ticket")])).toEqual([["g1", "ticket-a"]]);
    expect(b.queries.map((q) => [q.get("gameId"), q.get("ticket")])).toEqual([["g1", "ticket-b"]]);
    expect(a.inputs).toEqual([1, 2]);
    expect(b.inputs).toEqual([2]);
    expect(events).toEqual([
      "opened",
      "tick 1 score 0",
      "tick 2 score 0",
      "tick 3 score 0",
      "moved to tick 4",
      "moved after tick 3",
      "opened (moved)",
      "tick 4 score 0",
      "tick 5 score 0",
      "tick 6 score 1",
    ]);
  });

  it("without a way to resume, a stream that breaks ends the game with the close code and reason", async () => {
    const a = await engine((ws) => {
      const encoder = new FrameEncoder(COURSE);
      ws.once("message", () => {
        ws.send(message({ case: "frame", value: encoder.encode(state(1), 1) }));
        ws.close(CloseCode.Internal, "the engine is shutting down");
      });
    });
    servers.push(a);
    const game = new GameStream({ gameId: "g2", home: { engineUrl: "", engineWsUrl: a.url, streamTicket: "t" }, link: "websocket", connect: wsConnector() });
    await game.open();
    game.start();
    await game.done;
    expect(game.outcome()).toMatchObject({ completed: false, ticks: 1, error: "game stream closed: 4500 the engine is shutting down" });
  });
});
