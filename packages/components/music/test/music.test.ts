import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import { principalKey } from "@flaplab/component";
import {
  MusicService,
  PlayMusicRequestSchema,
  Sound,
  SoundClipSchema,
  type PlayMusicRequest,
  type SoundClip,
} from "@flaplab/contracts/music/v1/music_pb";
import { describe, expect, it } from "vitest";
import { createMusic, createMusicStreams, createSoundCatalog, musicComponent, type SoundCatalog } from "../src/index.js";

function context(withPrincipal = true): HandlerContext {
  const values = createContextValues();
  if (withPrincipal) {
    values.set(principalKey, { username: "alice", token: "t", expiresAt: new Date(Date.now() + 60_000) });
  }
  return createHandlerContext({
    service: MusicService,
    method: MusicService.method.playMusic,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/flaplab.music.v1.MusicService/PlayMusic",
    contextValues: values,
  });
}

function request(init: Partial<Omit<PlayMusicRequest, "$typeName">>): PlayMusicRequest {
  return create(PlayMusicRequestSchema, { gameId: "g1", sound: Sound.FLAP, inputSeq: 0, tick: 0, ...init });
}

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

const catalog = createSoundCatalog();

function setup(): { music: ReturnType<typeof createMusic>; streams: ReturnType<typeof createMusicStreams> } {
  const streams = createMusicStreams();
  return { music: createMusic({ streams, catalog }), streams };
}

describe("musicComponent", () => {
  it("is the music component with no public methods", () => {
    expect(musicComponent.name).toBe("music");
    expect(musicComponent.service).toBe(MusicService);
    expect(musicComponent.publicMethods).toEqual([]);
  });
});

describe("PlayMusic", () => {
  it("hands the sound's clip, tagged with inputSeq and tick, to the game's stream", async () => {
    const { music, streams } = setup();
    const got: SoundClip[] = [];
    streams.open("g1", (c) => void got.push(c));
    const res = await music.playMusic(request({ sound: Sound.POINT, inputSeq: 17, tick: 240 }), context());
    expect(got).toHaveLength(1);
    const c = got[0]!;
    expect(c.sound).toBe(Sound.POINT);
    expect(c.inputSeq).toBe(17);
    expect(c.tick).toBe(240);
    expect(c.mediaType).toBe("audio/wav");
    expect(c.audio).toEqual(catalog.get(Sound.POINT)?.bytes);
    expect(res.bytesSent).toBe(toBinary(SoundClipSchema, c).byteLength);
    expect(res.bytesSent).toBeGreaterThan(c.audio.byteLength);
    expect(streams.has("g1")).toBe(true);
  });

  it("sends each sound's own audio", async () => {
    const { music, streams } = setup();
    const got: SoundClip[] = [];
    streams.open("g1", (c) => void got.push(c));
    await music.playMusic(request({ sound: Sound.FLAP }), context());
    await music.playMusic(request({ sound: Sound.POINT }), context());
    expect(got.map((c) => c.audio.byteLength)).toEqual([
      catalog.get(Sound.FLAP)?.bytes.byteLength,
      catalog.get(Sound.POINT)?.bytes.byteLength,
    ]);
  });

  it("uses the catalog it is given", async () => {
    const streams = createMusicStreams();
    const custom: SoundCatalog = new Map([[Sound.FLAP, { mediaType: "audio/ogg", bytes: new Uint8Array([7, 7]) }]]);
    const music = createMusic({ streams, catalog: custom });
    const got: SoundClip[] = [];
    streams.open("g1", (c) => void got.push(c));
    await music.playMusic(request({ sound: Sound.FLAP }), context());
    expect(got[0]?.mediaType).toBe("audio/ogg");
    expect(got[0]?.audio).toEqual(new Uint8Array([7, 7]));
    const err = await failure(Promise.resolve(music.playMusic(request({ sound: Sound.DIE }), context())));
    expect(err.code).toBe(Code.Internal);
  });

  it("answers NotFound for a game with no music stream", async () => {
    const { music } = setup();
    const err = await failure(Promise.resolve(music.playMusic(request({ gameId: "ghost" }), context())));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe("no music stream for game ghost");
  });

  it("rejects a missing game id, UNSPECIFIED and unknown sounds with InvalidArgument", async () => {
    const { music, streams } = setup();
    const got: SoundClip[] = [];
    streams.open("g1", (c) => void got.push(c));
    for (const req of [request({ gameId: "" }), request({ sound: Sound.UNSPECIFIED }), request({ sound: 9 as Sound })]) {
      const err = await failure(Promise.resolve(music.playMusic(req, context())));
      expect(err.code).toBe(Code.InvalidArgument);
    }
    expect(got).toEqual([]);
  });

  it("closes the game's stream after SOUND_DIE", async () => {
    const { music, streams } = setup();
    const got: SoundClip[] = [];
    const handle = streams.open("g1", (c) => void got.push(c));
    await music.playMusic(request({ sound: Sound.DIE, tick: 52 }), context());
    expect(got.map((c) => c.sound)).toEqual([Sound.DIE]);
    expect(await handle.closed).toBe("game-over");
    expect(streams.has("g1")).toBe(false);
    const err = await failure(Promise.resolve(music.playMusic(request({ sound: Sound.FLAP }), context())));
    expect(err.code).toBe(Code.NotFound);
  });

  it("a throwing sink fails only that game's call", async () => {
    const { music, streams } = setup();
    streams.open("broken", () => {
      throw new Error("boom");
    });
    const got: SoundClip[] = [];
    streams.open("g1", (c) => void got.push(c));
    const err = await failure(Promise.resolve(music.playMusic(request({ gameId: "broken" }), context())));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.rawMessage).toMatch(/boom/);
    await music.playMusic(request({ gameId: "g1" }), context());
    expect(got).toHaveLength(1);
  });

  it("needs a principal", async () => {
    const { music, streams } = setup();
    streams.open("g1", () => {});
    const err = await failure(Promise.resolve(music.playMusic(request({}), context(false))));
    expect(err.code).toBe(Code.Unauthenticated);
  });
});
