import { create } from "@bufbuild/protobuf";
import {
  ClientInputSchema,
  GameStreamMessageSchema,
  GameSummarySchema,
  type Frame,
  type InputAck,
} from "@flaplab/contracts/engine/v1/stream_pb";
import { StartGameResponseSchema } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { Sound, SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { DelimitedDecoder, encodeDelimited, FrameEncoder, type FrameSource } from "@flaplab/game-stream";
import { parseTrace } from "@flaplab/traces";
import { describe, expect, it } from "vitest";
import type { StreamLink } from "../src/stream-link.js";
import { GameRun } from "../src/game-run.js";
import { inputToEffectDelays, inputToNextFrameDelays, LatencyLog } from "../src/latency-log.js";
import type { OpenStream, SessionEndInfo } from "../src/webtransport.js";

/** A session whose server side the test drives. */
class FakeSession {
  readonly written: Uint8Array[] = [];
  closedWith: { code: number; reason: string } | undefined;
  url = "";
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private resolveEnded!: (e: SessionEndInfo) => void;
  readonly ended = new Promise<SessionEndInfo>((r) => (this.resolveEnded = r));
  readonly open: OpenStream;

  constructor(kind: string) {
    const readable = new ReadableStream<Uint8Array>({ start: (c) => void (this.controller = c) });
    const writable = new WritableStream<Uint8Array>({ write: (chunk) => void this.written.push(chunk) });
    this.open = {
      kind,
      stream: { readable, writable },
      via: "fake",
      ended: this.ended,
      close: (code = 0, reason = "") => {
        this.closedWith ??= { code, reason };
        this.end(code, reason);
      },
    };
  }

  push(bytes: Uint8Array): void {
    this.controller.enqueue(bytes);
  }

  /** The server ends the session. */
  end(code: number, reason: string): void {
    try {
      this.controller.error(new Error(`Session closed with code ${code}`));
    } catch {
      // already errored
    }
    this.resolveEnded({ code, reason, failed: false });
  }
}

const COURSE = {
  pipeSpacing: 150,
  pipes: Array.from({ length: 10 }, (_, i) => ({ gapStart: 150 + 10 * i, gapHeight: 160 })),
  pipeWidth: 72,
  pipesInView: 3,
};

function state(tick: number, birdY: number, over = false): FrameSource {
  return {
    tick,
    phase: over ? "over" : "playing",
    birdY,
    score: 0,
    pipeSpeed: 2,
    pipeWindowX: 2 * tick,
    closestPipe: 0,
    courseEnd: false,
  };
}

const frameMsg = (frame: Frame) =>
  encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "frame", value: frame } }));
const ackMsg = (ack: InputAck) => encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "ack", value: ack } }));

const clipMsg = (sound: Sound, inputSeq: number, tick: number) =>
  encodeDelimited(
    SoundClipSchema,
    create(SoundClipSchema, { sound, inputSeq, tick, mediaType: "audio/wav", audio: new Uint8Array([1, 2, 3]) }),
  );

const tickAsync = () => new Promise((r) => setTimeout(r, 5));

function setup(link?: StreamLink) {
  let clock = 100;
  const now = () => (clock += 1.5);
  const game = new FakeSession("game");
  const music = new FakeSession("music");
  const played: number[] = [];
  const views: number[] = [];
  const log = new LatencyLog(now);
  const run = new GameRun({
    start: create(StartGameResponseSchema, {
      gameId: "g1",
      seed: 42n,
      engineUrl: "https://127.0.0.1:7443/engine",
      musicUrl: "https://127.0.0.1:7443/music",
      engineWsUrl: "ws://127.0.0.1:7070/engine",
      musicWsUrl: "ws://127.0.0.1:7070/music",
      streamTicket: "tkt",
    }),
    allowNative: false,
    ...(link ? { link } : {}),
    log,
    sound: {
      play: async (audio) => {
        played.push(audio.length);
        if (played.length === 2) throw new Error("EncodingError: unable to decode audio data");
      },
    },
    onView: (v) => views.push(v.tick),
    onNotice: () => undefined,
    now,
    openStream: async (kind, url) => {
      const s = kind === "game" ? game : music;
      s.url = url;
      return s.open;
    },
  });
  return { run, game, music, log, played, views };
}

function inputs(session: FakeSession) {
  const decoder = new DelimitedDecoder(ClientInputSchema);
  return session.written.flatMap((c) => decoder.push(c));
}

describe("GameRun", () => {
  it("plays a game: start input, flaps, frames, sounds, summary, then closes both sessions", async () => {
    const { run, game, music, log, played, views } = setup();
    await run.open();
    expect(game.url).toBe("https://127.0.0.1:7443/engine?gameId=g1&ticket=tkt");
    expect(music.url).toBe("https://127.0.0.1:7443/music?gameId=g1&ticket=tkt");
    expect(music.written).toHaveLength(0);
    expect(inputs(game).map((i) => i.seq)).toEqual([1]);
    expect(inputs(game)[0]!.clientTimeMs).toBeGreaterThan(performance.timeOrigin);

    const enc = new FrameEncoder(COURSE);
    game.push(frameMsg(enc.encode(state(1, 200), 1)));
    await tickAsync();
    expect(run.flap()).toBe(true);
    game.push(frameMsg(enc.encode(state(2, 196), 1)));
    // The engine acks the flap during tick 2: logged, but nothing is drawn.
    const ack = ackMsg(enc.ack({ ...state(2, 196), birdVelocity: -4.6 }, 2)!);
    game.push(ack);
    // Two messages in one chunk.
    const f3 = frameMsg(enc.encode(state(3, 190), 2));
    const f4 = frameMsg(enc.encode(state(4, 186, true), 2));
    game.push(new Uint8Array([...f3, ...f4]));
    music.push(clipMsg(Sound.FLAP, 2, 3));
    await tickAsync();
    expect(run.flap()).toBe(false); // over: no more inputs
    expect(inputs(game).map((i) => i.seq)).toEqual([1, 2]);

    const summary = create(GameSummarySchema, { score: 0, ticks: 4, recorded: true, framesSent: 4, frameBytes: 80n });
    game.push(encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "summary", value: summary } })));
    music.push(clipMsg(Sound.DIE, 0, 4));
    const result = await run.finished;

    expect(views).toEqual([1, 2, 3, 4]);
    expect(result).toMatchObject({ gameId: "g1", seed: 42n, score: 0, ticks: 4, completed: true, error: undefined });
    expect(result.engineSummary?.recorded).toBe(true);
    expect(game.closedWith).toEqual({ code: 0, reason: "game finished" });
    expect(music.closedWith).toEqual({ code: 0, reason: "game finished" });

    const rows = log.rows;
    const frames = rows.filter((r) => r.type === "frame");
    expect(frames.map((r) => [r.tick, r.reflectedSeq, r.kind])).toEqual([
      [1, 1, "tick"],
      [2, 1, "tick"],
      [2, 2, "ack"],
      [3, 2, "tick"],
      [4, 2, "tick"],
    ]);
    expect(frames[2]!.bytes).toBe(ack.length);
    expect(frames[3]!.bytes).toBe(f3.length);
    expect(frames[4]!.bytes).toBe(f4.length);
    expect(rows.filter((r) => r.type === "audio").map((r) => [r.seq, r.sound])).toEqual([[2, "flap"], [0, "die"]]);
    expect(played).toEqual([3, 3]);
    // The second clip failed to decode: an error row, no crash.
    expect(rows.some((r) => r.type === "error" && r.sound === "die" && /unable to decode/.test(r.note ?? ""))).toBe(true);
    expect(rows.filter((r) => r.type === "summary")).toHaveLength(1);

    const s = log.summary();
    expect(s.framesReceived).toBe(4);
    expect(s.acksReceived).toBe(1);
    expect(s.inputToEffectCount).toBe(2);
    // The flap's effect is its ack; its next tick frame came later.
    expect(inputToEffectDelays(rows)[1]).toBe(frames[2]!.time - rows.find((r) => r.type === "input" && r.seq === 2)!.time);
    expect(inputToNextFrameDelays(rows)[1]).toBe(frames[1]!.time - rows.find((r) => r.type === "input" && r.seq === 2)!.time);
    expect(s.inputToAudioCount).toBe(1);

    const trace = parseTrace(result.trace);
    expect(trace.seed).toBe(42n);
    expect(trace.recordedTicks).toEqual([3]);
    expect(trace.flapOffsetsMs).toHaveLength(1);
  });

  it("reports an abnormal close of the game stream", async () => {
    const { run, game } = setup();
    await run.open();
    game.end(4404, "unknown game g1");
    const result = await run.finished;
    expect(result.completed).toBe(false);
    expect(result.error).toBe("game stream closed: 4404 unknown game g1");
    expect(run.flap()).toBe(false);
  });

  it("closes with 4400 on a frame it cannot decode", async () => {
    const { run, game } = setup();
    await run.open();
    const enc = new FrameEncoder(COURSE);
    enc.encode(state(1, 200), 1);
    game.push(frameMsg(enc.encode(state(2, 200), 1))); // a delta before any full frame
    const result = await run.finished;
    expect(result.error).toMatch(/^bad message from the engine: delta frame for tick 2 before any full frame/);
    expect(game.closedWith?.code).toBe(4400);
  });
});

describe("GameRun over a chosen link", () => {
  it("opens both sessions at StartGame's WebSocket URLs with link websocket", async () => {
    const { run, game, music } = setup("websocket");
    await run.open();
    expect(music.url).toBe("ws://127.0.0.1:7070/music?gameId=g1&ticket=tkt");
    expect(game.url).toBe("ws://127.0.0.1:7070/engine?gameId=g1&ticket=tkt");
    run.abort("test over");
  });

  it("opens them at the WebTransport URLs with link webtransport", async () => {
    const { run, game } = setup("webtransport");
    await run.open();
    expect(game.url).toBe("https://127.0.0.1:7443/engine?gameId=g1&ticket=tkt");
    run.abort("test over");
  });
});

describe("GameRun.abort", () => {
  it("closes both sessions at once and reports the reason", async () => {
    const { run, game, music } = setup();
    await run.open();
    run.abort("logged out");
    expect(game.closedWith).toEqual({ code: 0, reason: "logged out" });
    expect(music.closedWith).toEqual({ code: 0, reason: "logged out" });
    const result = await run.finished;
    expect(result.error).toBe("logged out");
    expect(result.completed).toBe(false);
  });
});
