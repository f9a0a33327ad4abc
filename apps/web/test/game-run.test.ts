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
import { DelimitedDecoder, encodeDelimited, FrameEncoder, type FrameSource } from "@flaplab/game-protocol";
import { parseTrace } from "@flaplab/input-traces";
import { describe, expect, it } from "vitest";
import type { StreamLink } from "../src/stream-link.js";
import { Code, ConnectError } from "@connectrpc/connect";
import { type EngineHome, GameRun } from "../src/game-run.js";
import { inputToEffectDelays, inputToNextFrameDelays, LatencyLog } from "../src/latency-log.js";
import type { SessionEnd, StreamConnection } from "@flaplab/game-client";

/** A session whose server side the test drives. */
class FakeSession {
  readonly written: Uint8Array[] = [];
  closedWith: { code: number; reason: string } | undefined;
  url = "";
  private reader: ((bytes: Uint8Array) => void) | undefined;
  private readonly early: Uint8Array[] = [];
  private over = false;
  private resolveEnded!: (e: SessionEnd) => void;
  readonly ended = new Promise<SessionEnd>((r) => (this.resolveEnded = r));
  readonly open: StreamConnection;

  constructor() {
    this.open = {
      via: "fake",
      ended: this.ended,
      read: (onChunk) => {
        this.reader = onChunk;
        for (const bytes of this.early.splice(0)) onChunk(bytes);
      },
      send: (bytes) => {
        if (this.over) return false;
        this.written.push(bytes);
        return true;
      },
      close: (code = 0, reason = "") => {
        this.closedWith ??= { code, reason };
        this.end(code, reason);
      },
    };
  }

  /** The server sends bytes; they arrive a moment later, as from a network. */
  push(bytes: Uint8Array): void {
    queueMicrotask(() => {
      if (this.over) return;
      if (this.reader) this.reader(bytes);
      else this.early.push(bytes);
    });
  }

  /** The server ends the session. */
  end(code: number, reason: string): void {
    this.over = true;
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

function setup(link?: StreamLink, extra: { resume?: (gameId: string) => Promise<EngineHome> } = {}) {
  let clock = 100;
  const now = () => (clock += 1.5);
  const game = new FakeSession();
  const music = new FakeSession();
  const played: number[] = [];
  const views: number[] = [];
  const statuses: Array<string | undefined> = [];
  /** Every game and music session opened, the first one first. */
  const games: FakeSession[] = [];
  const musics: FakeSession[] = [];
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
    onStatus: (text) => statuses.push(text),
    ...extra,
    now,
    connect: async (kind, url) => {
      const list = kind === "game" ? games : musics;
      const s = list.length === 0 ? (kind === "game" ? game : music) : new FakeSession();
      list.push(s);
      s.url = url;
      return s.open;
    },
  });
  return { run, game, games, music, musics, log, played, views, statuses };
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

const movedMsg = (home: EngineHome, tick: number) =>
  encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "moved", value: { ...home, tick } } }));

describe("GameRun when its engine goes away", () => {
  it("follows Moved to the new engine, re-sends the inputs no tick frame reflected, and plays on from the full frame", async () => {
    const { run, games, log, views, statuses } = setup("websocket");
    await run.open();
    const enc = new FrameEncoder(COURSE);
    games[0]!.push(frameMsg(enc.encode(state(1, 200), 1)));
    await tickAsync();
    run.flap(); // seq 2: acked, never reflected by a tick frame
    games[0]!.push(ackMsg(enc.ack({ ...state(1, 200), birdVelocity: -4.6 }, 2)!));
    run.flap(); // seq 3: not even acked
    games[0]!.push(movedMsg({ engineUrl: "https://b:1/engine", engineWsUrl: "ws://b:2/engine", streamTicket: "tkt-b" }, 1));
    await tickAsync();
    // Opened on the Moved message, before the old stream's close.
    expect(games).toHaveLength(2);
    games[0]!.end(4301, "game moved to another engine");
    await tickAsync();
    expect(games).toHaveLength(2);
    expect(games[1]!.url).toBe("ws://b:2/engine?gameId=g1&ticket=tkt-b");
    expect(games[1]!.written).toHaveLength(0);
    // The new engine's full frame reflects input 1: both later inputs, in one message, with their own seqs.
    const enc2 = new FrameEncoder(COURSE);
    games[1]!.push(frameMsg(enc2.encode(state(1, 200), 1)));
    await tickAsync();
    expect(games[1]!.written).toHaveLength(1);
    expect(inputs(games[1]!).map((i) => i.seq)).toEqual([2, 3]);
    games[1]!.push(frameMsg(enc2.encode(state(2, 190, true), 3)));
    games[1]!.push(encodeDelimited(GameStreamMessageSchema, create(GameStreamMessageSchema, { kind: { case: "summary", value: { score: 0, ticks: 2, recorded: true } } })));
    const result = await run.finished;
    expect(result).toMatchObject({ completed: true, error: undefined, ticks: 2 });
    expect(run.reconnections).toBe(1);
    expect(views).toEqual([1, 1, 2]);
    expect(statuses).toEqual(["reconnecting…", undefined]);
    expect(log.rows.filter((r) => r.type === "reopen")).toHaveLength(1);
  });

  it("asks to resume a game whose stream broke, and re-sends its latest input when every input was reflected", async () => {
    const resumed: string[] = [];
    const { run, games } = setup("websocket", {
      resume: async (gameId) => {
        resumed.push(gameId);
        // The first try finds no engine yet.
        if (resumed.length === 1) throw new Error("no engine could take the game");
        return { engineUrl: "https://c:1/engine", engineWsUrl: "ws://c:2/engine", streamTicket: "tkt-c" };
      },
    });
    await run.open();
    const enc = new FrameEncoder(COURSE);
    games[0]!.push(frameMsg(enc.encode(state(1, 200), 1)));
    await tickAsync();
    (games[0] as FakeSession).end(1006, "");
    await new Promise((r) => setTimeout(r, 150));
    expect(resumed).toEqual(["g1", "g1"]);
    expect(games[1]!.url).toBe("ws://c:2/engine?gameId=g1&ticket=tkt-c");
    games[1]!.push(frameMsg(new FrameEncoder(COURSE).encode(state(1, 200), 1)));
    await tickAsync();
    // Every input reflected: the latest one goes (the engine drops it), so that it ticks on at once.
    expect(inputs(games[1]!).map((i) => i.seq)).toEqual([1]);
    run.abort("test over");
  });

  it("re-sends inputs an old frame reflected when the continued game's full frame stands before them", async () => {
    const { run, games } = setup("websocket", {
      resume: async () => ({ engineUrl: "https://c:1/engine", engineWsUrl: "ws://c:2/engine", streamTicket: "tkt-c" }),
    });
    await run.open();
    const enc = new FrameEncoder(COURSE);
    games[0]!.push(frameMsg(enc.encode(state(1, 200), 1)));
    await tickAsync();
    run.flap();
    games[0]!.push(frameMsg(enc.encode(state(2, 196), 2)));
    await tickAsync();
    run.flap();
    games[0]!.push(frameMsg(enc.encode(state(3, 190), 3)));
    await tickAsync();
    games[0]!.end(1006, "");
    await tickAsync();
    // The engine died before its snapshots of ticks 2 and 3 were stored: the game goes on from tick 1.
    games[1]!.push(frameMsg(new FrameEncoder(COURSE).encode(state(1, 200), 1)));
    await tickAsync();
    expect(inputs(games[1]!).map((i) => i.seq)).toEqual([2, 3]);
    run.abort("test over");
  });

  it("plays on without sound when the music stream breaks, and reopens it until music is back", async () => {
    const { run, games, musics, statuses, log } = setup("websocket", {
      resume: async () => ({ engineUrl: "https://a:1/engine", engineWsUrl: "ws://a:2/engine", streamTicket: "tkt-2" }),
    });
    await run.open();
    const enc = new FrameEncoder(COURSE);
    games[0]!.push(frameMsg(enc.encode(state(1, 200), 1)));
    musics[0]!.end(1006, "");
    await tickAsync();
    expect(statuses).toEqual(["music unavailable: the game goes on without sound"]);
    // The game goes on meanwhile.
    games[0]!.push(frameMsg(enc.encode(state(2, 196), 1)));
    await new Promise((r) => setTimeout(r, 300));
    expect(musics).toHaveLength(2);
    expect(musics[1]!.url).toBe("ws://127.0.0.1:7070/music?gameId=g1&ticket=tkt");
    expect(statuses).toEqual(["music unavailable: the game goes on without sound", undefined]);
    musics[1]!.push(clipMsg(Sound.POINT, 0, 3));
    await tickAsync();
    expect(log.rows.some((r) => r.type === "audio" && r.sound === "point")).toBe(true);
    expect(log.rows.some((r) => r.type === "reopen" && /^music via fake/.test(r.note ?? ""))).toBe(true);
    run.abort("test over");
  });

  it("tries again when a reopened stream is refused 4409 because the engine has not yet seen the old one end", async () => {
    const { run, games } = setup("websocket", {
      resume: async () => ({ engineUrl: "https://a:1/engine", engineWsUrl: "ws://a:2/engine", streamTicket: "tkt-2" }),
    });
    await run.open();
    const enc = new FrameEncoder(COURSE);
    games[0]!.push(frameMsg(enc.encode(state(1, 200), 1)));
    await tickAsync();
    games[0]!.end(1006, "");
    await tickAsync();
    expect(games).toHaveLength(2);
    games[1]!.end(4409, "game already has a stream");
    await new Promise((r) => setTimeout(r, 200));
    expect(games).toHaveLength(3);
    games[2]!.push(frameMsg(new FrameEncoder(COURSE).encode(state(1, 200), 1)));
    await tickAsync();
    expect(inputs(games[2]!).map((i) => i.seq)).toEqual([1]);
    run.abort("test over");
    expect((await run.finished).error).toBe("test over");
  });

  it("gives up at once when ResumeGame says the game cannot be continued", async () => {
    let calls = 0;
    const { run, game } = setup("websocket", {
      resume: async () => {
        calls++;
        throw new ConnectError("game g1 has no snapshot to continue from", Code.NotFound);
      },
    });
    await run.open();
    game.end(4500, "engine shutting down; resume the game");
    const result = await run.finished;
    expect(calls).toBe(1);
    expect(result.error).toBe("the game's engine went away and the game could not be resumed: [not_found] game g1 has no snapshot to continue from");
  });

  it("ends the game with the reason when it cannot be resumed, and never resumes a refused stream", async () => {
    const { run, game } = setup("websocket", { resume: async () => Promise.reject(new Error("unused")) });
    await run.open();
    game.end(4403, "game g1 belongs to another player");
    expect((await run.finished).error).toBe("game stream closed: 4403 game g1 belongs to another player");
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
