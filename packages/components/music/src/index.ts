export { musicComponent, createMusic } from "./music.js";
export type { MusicDeps } from "./music.js";
export { createSoundCatalog, WAV_MEDIA_TYPE } from "./catalog.js";
export type { SoundAsset, SoundCatalog } from "./catalog.js";
export {
  synthesizeSound,
  isPlayableSound,
  PLAYABLE_SOUNDS,
  SOUND_DURATION_MS,
  SOUND_SAMPLE_RATE,
} from "./synth.js";
export type { PlayableSound } from "./synth.js";
export { encodeWav, WAV_HEADER_BYTES } from "./wav.js";
export { createMusicStreams } from "./streams.js";
export type {
  ClipSink,
  MusicStreamCloseReason,
  MusicStreamHandle,
  MusicStreams,
  SendOptions,
} from "./streams.js";
export { createMusicSessionHandler, DEFAULT_MUSIC_MAX_BUFFERED_BYTES } from "./session.js";
export type { MusicSessionDeps } from "./session.js";
