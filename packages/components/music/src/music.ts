import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import { MusicService, Sound, SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { createSoundCatalog, type SoundCatalog } from "./catalog.js";
import type { MusicStreams } from "./streams.js";

/** The music component. PlayMusic needs a token. */
/** PlayMusic is internal: only the engine pushes sounds to a game's music stream. */
export const musicComponent = defineComponent({ name: "music", service: MusicService, internalMethods: ["PlayMusic"], callers: { PlayMusic: ["engine"] }, calls: [] });

export interface MusicDeps {
  /** Where clips go; the transport opens a stream per game in the same registry. */
  readonly streams: MusicStreams;
  /** Audio per sound; synthesized once by createSoundCatalog() when omitted. */
  readonly catalog?: SoundCatalog;
}

export function createMusic(deps: MusicDeps): ServiceImpl<typeof MusicService> {
  const { streams } = deps;
  const catalog = deps.catalog ?? createSoundCatalog();

  return {
    async playMusic(req, ctx) {
      requirePrincipal(ctx);
      if (req.gameId === "") {
        throw new ConnectError("game id is required", Code.InvalidArgument);
      }
      if (req.sound === Sound.UNSPECIFIED) {
        throw new ConnectError("sound is required", Code.InvalidArgument);
      }
      if (Sound[req.sound] === undefined) {
        throw new ConnectError(`unknown sound ${String(req.sound)}`, Code.InvalidArgument);
      }
      const asset = catalog.get(req.sound);
      if (!asset) {
        throw new ConnectError(`the sound catalog has no audio for ${Sound[req.sound]}`, Code.Internal);
      }
      if (!streams.has(req.gameId)) {
        throw new ConnectError(`no music stream for game ${req.gameId}`, Code.NotFound);
      }
      const clip = create(SoundClipSchema, {
        sound: req.sound,
        inputSeq: req.inputSeq,
        tick: req.tick,
        mediaType: asset.mediaType,
        audio: asset.bytes,
      });
      // The game-over sound is the last one: the stream ends after it, as in FlappyGo.
      await streams.send(req.gameId, clip, { closeAfter: req.sound === Sound.DIE });
      return { bytesSent: toBinary(SoundClipSchema, clip).byteLength };
    },
  };
}
