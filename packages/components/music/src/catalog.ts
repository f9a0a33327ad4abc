import type { Sound } from "@flaplab/contracts/music/v1/music_pb";
import { PLAYABLE_SOUNDS, synthesizeSound } from "./synth.js";

export const WAV_MEDIA_TYPE = "audio/wav";

/** One sound's encoded audio. The bytes are shared by every clip sent: treat them as read-only. */
export interface SoundAsset {
  readonly mediaType: string;
  readonly bytes: Uint8Array;
}

export type SoundCatalog = ReadonlyMap<Sound, SoundAsset>;

/** Synthesizes every playable sound once. Build it at start-up, not per call. */
export function createSoundCatalog(): ReadonlyMap<Sound, SoundAsset & { readonly mediaType: typeof WAV_MEDIA_TYPE }> {
  const catalog = new Map<Sound, { readonly mediaType: typeof WAV_MEDIA_TYPE; readonly bytes: Uint8Array }>();
  for (const sound of PLAYABLE_SOUNDS) {
    catalog.set(sound, { mediaType: WAV_MEDIA_TYPE, bytes: synthesizeSound(sound) });
  }
  return catalog;
}
