import { Sound } from "@flaplab/contracts/music/v1/music_pb";
import { describe, expect, it } from "vitest";
import {
  createSoundCatalog,
  encodeWav,
  PLAYABLE_SOUNDS,
  SOUND_DURATION_MS,
  SOUND_SAMPLE_RATE,
  synthesizeSound,
  WAV_HEADER_BYTES,
} from "../src/index.js";
import { dominantFrequency, readWav, rms } from "./wav-reader.js";

const SR = SOUND_SAMPLE_RATE;
/** Candidate frequencies 40..1515 Hz in 25 Hz steps. */
const GRID = Array.from({ length: 60 }, (_, i) => 40 + i * 25);

/** Dominant frequency in consecutive 25 ms windows. */
function pitchTrack(samples: Float64Array): number[] {
  const win = Math.round(0.025 * SR);
  const track: number[] = [];
  for (let from = 0; from + win <= samples.length; from += win) {
    track.push(dominantFrequency(samples, SR, from, from + win, GRID));
  }
  return track;
}

describe("synthesizeSound", () => {
  for (const sound of PLAYABLE_SOUNDS) {
    describe(Sound[sound], () => {
      const bytes = synthesizeSound(sound);
      const wav = readWav(bytes);

      it("is a complete mono 16-bit PCM WAV file at 22050 Hz", () => {
        expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("RIFF");
        expect(new TextDecoder().decode(bytes.subarray(8, 12))).toBe("WAVE");
        expect(wav.riffSize).toBe(bytes.byteLength - 8);
        expect(wav.audioFormat).toBe(1);
        expect(wav.channels).toBe(1);
        expect(wav.sampleRate).toBe(22050);
        expect(wav.bitsPerSample).toBe(16);
        expect(wav.blockAlign).toBe(2);
        expect(wav.byteRate).toBe(22050 * 2);
        expect(wav.dataSize).toBe(bytes.byteLength - WAV_HEADER_BYTES);
        expect(wav.dataSize % 2).toBe(0);
      });

      it("lasts its documented duration and stays under 24 KB", () => {
        const durationMs = (wav.samples.length / wav.sampleRate) * 1000;
        expect(durationMs).toBeCloseTo(SOUND_DURATION_MS[sound], 0);
        expect(bytes.byteLength).toBeLessThan(24 * 1024);
      });

      it("is audible, does not clip, and starts and ends at silence", () => {
        expect(rms(wav.samples)).toBeGreaterThan(0.1);
        const peak = Math.max(...wav.samples.map(Math.abs));
        expect(peak).toBeGreaterThan(0.5);
        expect(peak).toBeLessThan(0.99);
        expect(Math.abs(wav.samples[0] ?? 1)).toBeLessThan(0.01);
        expect(wav.samples[wav.samples.length - 1]).toBe(0);
      });

      it("is deterministic", () => {
        expect(synthesizeSound(sound)).toEqual(bytes);
      });
    });
  }

  it("gives each sound different audio", () => {
    const [a, b, c] = PLAYABLE_SOUNDS.map((s) => synthesizeSound(s));
    expect(a).not.toEqual(b);
    expect(b).not.toEqual(c);
    expect(a).not.toEqual(c);
  });

  it("FLAP is an upward chirp", () => {
    const track = pitchTrack(readWav(synthesizeSound(Sound.FLAP)).samples);
    expect(track.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < track.length; i++) expect(track[i]).toBeGreaterThan(track[i - 1] ?? Infinity);
    expect(track[track.length - 1]! - track[0]!).toBeGreaterThan(250);
  });

  it("POINT is two notes, the second higher (B5 then E6)", () => {
    const track = pitchTrack(readWav(synthesizeSound(Sound.POINT)).samples);
    expect(track[0]).toBeCloseTo(987.77, -2);
    expect(track[track.length - 1]).toBeCloseTo(1318.51, -2);
    expect(new Set(track).size).toBe(2);
  });

  it("DIE opens with a low thud, then a tone falls", () => {
    const samples = readWav(synthesizeSound(Sound.DIE)).samples;
    const track = pitchTrack(samples);
    expect(track[0]).toBeLessThan(150);
    const tone = track.slice(track.findIndex((f) => f > 400));
    expect(tone.length).toBeGreaterThan(8);
    for (let i = 1; i < tone.length; i++) expect(tone[i]).toBeLessThanOrEqual(tone[i - 1] ?? -Infinity);
    expect(tone[0]! - tone[tone.length - 1]!).toBeGreaterThan(300);
  });

  it("rejects UNSPECIFIED and unknown values", () => {
    expect(() => synthesizeSound(Sound.UNSPECIFIED)).toThrow(RangeError);
    expect(() => synthesizeSound(42 as Sound)).toThrow(RangeError);
  });
});

describe("encodeWav", () => {
  it("writes little-endian 16-bit samples, clipping out-of-range input", () => {
    const bytes = encodeWav([0, 1, -1, 2, -3, 0.5], 8000);
    const view = new DataView(bytes.buffer);
    const pcm = [0, 1, 2, 3, 4, 5].map((i) => view.getInt16(WAV_HEADER_BYTES + 2 * i, true));
    expect(pcm).toEqual([0, 32767, -32768, 32767, -32768, 16384]);
    const wav = readWav(bytes);
    expect(wav.sampleRate).toBe(8000);
    expect(wav.byteRate).toBe(16000);
    expect(wav.dataSize).toBe(12);
  });

  it("rejects a bad sample rate", () => {
    expect(() => encodeWav([0], 0)).toThrow(RangeError);
    expect(() => encodeWav([0], 22050.5)).toThrow(RangeError);
  });
});

describe("createSoundCatalog", () => {
  it("holds every playable sound as audio/wav, and nothing else", () => {
    const catalog = createSoundCatalog();
    expect([...catalog.keys()].sort()).toEqual([...PLAYABLE_SOUNDS].sort());
    for (const sound of PLAYABLE_SOUNDS) {
      const asset = catalog.get(sound);
      expect(asset?.mediaType).toBe("audio/wav");
      expect(asset?.bytes).toEqual(synthesizeSound(sound));
    }
    expect(catalog.has(Sound.UNSPECIFIED)).toBe(false);
  });
});
