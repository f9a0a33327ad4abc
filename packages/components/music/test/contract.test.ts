import { toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { Sound, SoundClipSchema, type SoundClip } from "@flaplab/contracts/music/v1/music_pb";
import { type ContractMode, describeContract, rejection } from "@flaplab/testkit";
import { expect, it } from "vitest";
import { createMusic, createMusicStreams, createSoundCatalog, musicComponent, type MusicStreams } from "../src/index.js";

const catalog = createSoundCatalog();
/** The registry each mode's music component sends to, so tests can open a game's stream first. */
const streamsByMode = new Map<ContractMode, MusicStreams>();

describeContract(
  {
    component: musicComponent,
    caller: "engine",
    create: (env) => {
      const streams = createMusicStreams();
      streamsByMode.set(env.mode, streams);
      return createMusic({ streams, catalog });
    },
    peers: [],
  },
  (t) => {
    const streams = (): MusicStreams => {
      const s = streamsByMode.get(t.mode);
      if (!s) throw new Error(`no music streams for mode ${t.mode}`);
      return s;
    };

    it("hands the clip, tagged with inputSeq and tick, to the game's stream", async () => {
      const got: SoundClip[] = [];
      const handle = streams().open("g1", (c) => void got.push(c));
      const res = await t.client.playMusic({ gameId: "g1", sound: Sound.FLAP, inputSeq: 5, tick: 31 });
      expect(got).toHaveLength(1);
      const clip = got[0]!;
      expect(clip.sound).toBe(Sound.FLAP);
      expect(clip.inputSeq).toBe(5);
      expect(clip.tick).toBe(31);
      expect(clip.mediaType).toBe("audio/wav");
      expect(clip.audio).toEqual(catalog.get(Sound.FLAP)?.bytes);
      expect(res.bytesSent).toBe(toBinary(SoundClipSchema, clip).byteLength);
      handle.close();
    });

    it("closes the game's stream after SOUND_DIE", async () => {
      const got: Sound[] = [];
      const handle = streams().open("g2", (c) => void got.push(c.sound));
      await t.client.playMusic({ gameId: "g2", sound: Sound.POINT, inputSeq: 0, tick: 10 });
      await t.client.playMusic({ gameId: "g2", sound: Sound.DIE, inputSeq: 0, tick: 52 });
      expect(got).toEqual([Sound.POINT, Sound.DIE]);
      expect(await handle.closed).toBe("game-over");
      const err = await rejection(t.client.playMusic({ gameId: "g2", sound: Sound.FLAP }));
      expect(err.code).toBe(Code.NotFound);
    });

    it("answers NotFound for a game with no music stream", async () => {
      const err = await rejection(t.client.playMusic({ gameId: "ghost", sound: Sound.FLAP }));
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toBe("no music stream for game ghost");
    });

    it("rejects a missing game id, UNSPECIFIED and unknown sounds with InvalidArgument", async () => {
      const got: SoundClip[] = [];
      const handle = streams().open("g3", (c) => void got.push(c));
      for (const req of [
        { gameId: "", sound: Sound.FLAP },
        { gameId: "g3", sound: Sound.UNSPECIFIED },
        { gameId: "g3", sound: 9 as Sound },
      ]) {
        const err = await rejection(t.client.playMusic(req));
        expect(err.code).toBe(Code.InvalidArgument);
      }
      expect(got).toEqual([]);
      handle.close();
    });

    it("a throwing sink fails only its own game", async () => {
      const broken = streams().open("broken", () => {
        throw new Error("writer gone");
      });
      const got: SoundClip[] = [];
      const handle = streams().open("g4", (c) => void got.push(c));
      const err = await rejection(t.client.playMusic({ gameId: "broken", sound: Sound.FLAP }));
      expect(err.code).toBe(Code.Unavailable);
      expect(await broken.closed).toBe("sink-failed");
      await t.client.playMusic({ gameId: "g4", sound: Sound.FLAP });
      expect(got).toHaveLength(1);
      handle.close();
    });

    it("rejects a call without a token with Unauthenticated", async () => {
      const handle = streams().open("g5", () => {});
      const err = await rejection(t.clientAs(undefined).playMusic({ gameId: "g5", sound: Sound.FLAP }));
      expect(err.code).toBe(Code.Unauthenticated);
      handle.close();
    });

    it("refuses PlayMusic from a player's own token with PermissionDenied, and sends nothing", async () => {
      const sent: unknown[] = [];
      const handle = streams().open("g6", (clip) => void sent.push(clip));
      const err = await rejection(t.clientAs(await t.token("mallory")).playMusic({ gameId: "g6", sound: Sound.FLAP }));
      expect(err.code).toBe(Code.PermissionDenied);
      expect(sent).toEqual([]);
      handle.close();
    });
  },
);
