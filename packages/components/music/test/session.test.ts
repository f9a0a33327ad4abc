import { create } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import { type Principal, principalKey } from "@flaplab/component";
import { MusicService, PlayMusicRequestSchema, Sound, type SoundClip, SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { CloseCode } from "@flaplab/game-protocol";
import { MemoryStreamSession } from "@flaplab/game-protocol/testing";
import { describe, expect, it } from "vitest";
import { createMusic, createMusicSessionHandler, createMusicStreams, type MusicStreams } from "../src/index.js";

const alice: Principal = { username: "alice", token: "token-a", expiresAt: new Date(Date.UTC(2030, 0, 1)) };

function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The clips the session has sent, decoded. */
function clips(session: MemoryStreamSession): SoundClip[] {
  return session.messages(SoundClipSchema, 1 << 20);
}

function clip(sound: Sound, inputSeq = 0, tick = 0): SoundClip {
  return create(SoundClipSchema, { sound, inputSeq, tick, mediaType: "audio/wav", audio: new Uint8Array([1, 2, 3, sound]) });
}

const bob: Principal = { username: "bob", token: "token-b", expiresAt: new Date(Date.UTC(2030, 0, 1)) };

function setup(): { streams: MusicStreams; connect(gameId: string, who?: Principal): MemoryStreamSession } {
  const streams = createMusicStreams();
  const handler = createMusicSessionHandler({ streams, maxBufferedBytes: 100 });
  return {
    streams,
    connect(gameId, who = alice) {
      const session = new MemoryStreamSession({ gameId, principal: who, kind: "music" });
      handler(session);
      return session;
    },
  };
}

describe("createMusicSessionHandler", () => {
  it("sends each clip of its game as a size-delimited SoundClip", async () => {
    const { streams, connect } = setup();
    const a = connect("a");
    const b = connect("b");
    expect(streams.has("a")).toBe(true);
    await streams.send("a", clip(Sound.FLAP, 2, 40));
    await streams.send("a", clip(Sound.POINT, 0, 65));
    await streams.send("b", clip(Sound.FLAP, 5, 9));
    expect(clips(a)).toEqual([clip(Sound.FLAP, 2, 40), clip(Sound.POINT, 0, 65)]);
    expect(clips(b)).toEqual([clip(Sound.FLAP, 5, 9)]);
    expect(a.end).toBeUndefined();
  });

  it("closes 0 'game over' after the game-over clip", async () => {
    const { streams, connect } = setup();
    const s = connect("g");
    await streams.send("g", clip(Sound.DIE, 0, 402), { closeAfter: true });
    await flush();
    expect(clips(s).map((c) => c.sound)).toEqual([Sound.DIE]);
    expect(s.end).toEqual({ code: CloseCode.Normal, reason: "game over", by: "server" });
    expect(streams.has("g")).toBe(false);
  });

  it("ends with PlayMusic(DIE) through the component", async () => {
    const { streams, connect } = setup();
    const s = connect("g");
    const music = createMusic({ streams });
    const contextValues = createContextValues().set(principalKey, alice);
    const ctx = createHandlerContext({
      service: MusicService,
      method: MusicService.method.playMusic,
      protocolName: "test",
      requestMethod: "POST",
      url: "http://localhost/flaplab.music.v1.MusicService/PlayMusic",
      contextValues,
    });
    await music.playMusic(create(PlayMusicRequestSchema, { gameId: "g", sound: Sound.DIE, tick: 7 }), ctx);
    await flush();
    expect(clips(s)).toHaveLength(1);
    expect(clips(s)[0]?.mediaType).toBe("audio/wav");
    expect(s.end?.code).toBe(CloseCode.Normal);
  });

  it("closes a second music stream for the same game 4409 and keeps the first", async () => {
    const { streams, connect } = setup();
    const first = connect("g");
    const second = connect("g");
    expect(second.end).toMatchObject({ code: CloseCode.AlreadyConnected, reason: "game already has a music stream" });
    await flush();
    await streams.send("g", clip(Sound.FLAP));
    expect(clips(first)).toHaveLength(1);
    expect(second.sent).toHaveLength(0);
    expect(first.end).toBeUndefined();
  });

  it("closes 4403 for another player's ticket (of their own game) on this game, and the owner's stream goes on", async () => {
    const { streams, connect } = setup();
    const owner = connect("g-a");
    const foreign = connect("g-a", { ...bob, gameId: "g-b" });
    expect(foreign.end).toMatchObject({ code: CloseCode.PermissionDenied, reason: "the stream ticket is not for game g-a" });
    // Before the owner's stream was open, too: the foreign session never becomes the game's stream.
    const early = connect("g-c", { ...bob, gameId: "g-b" });
    expect(early.end?.code).toBe(CloseCode.PermissionDenied);
    expect(streams.has("g-c")).toBe(false);
    await flush();
    await streams.send("g-a", clip(Sound.FLAP, 1, 3));
    expect(clips(owner)).toEqual([clip(Sound.FLAP, 1, 3)]);
    expect(foreign.sent).toHaveLength(0);
    expect(owner.end).toBeUndefined();
  });

  it("closes 4400 when the client writes to the stream", async () => {
    const { streams, connect } = setup();
    const s = connect("g");
    s.push(new Uint8Array([0]));
    await flush();
    expect(s.end).toMatchObject({ code: CloseCode.Malformed, reason: "the music stream is receive-only" });
    expect(streams.has("g")).toBe(false);
  });

  it("stays open when the client only closes its sending side", async () => {
    const { streams, connect } = setup();
    const s = connect("g");
    s.endInput();
    await flush();
    expect(s.end).toBeUndefined();
    await streams.send("g", clip(Sound.FLAP));
    expect(clips(s)).toHaveLength(1);
  });

  it("closes the registry stream when the client leaves", async () => {
    const { streams, connect } = setup();
    const s = connect("g");
    s.leave();
    await flush();
    expect(streams.has("g")).toBe(false);
    // The game may get a new music stream.
    const again = connect("g");
    expect(again.end).toBeUndefined();
    expect(streams.has("g")).toBe(true);
  });

  it("closes a client that does not keep up 4429", async () => {
    const { streams, connect } = setup();
    const s = connect("g");
    s.bufferedBytes = 101;
    await expect(streams.send("g", clip(Sound.FLAP))).rejects.toThrow(/client too slow/);
    expect(s.end).toMatchObject({ code: CloseCode.TooSlow, reason: "client too slow" });
    expect(s.sent).toHaveLength(0);
    expect(streams.has("g")).toBe(false);
  });

  it("closes 4400 for an empty game id", () => {
    const { connect } = setup();
    expect(connect("").end).toMatchObject({ code: CloseCode.Malformed, reason: "game id is required to open a music stream" });
  });
});
