import { Sound } from "@flaplab/contracts/music/v1/music_pb";
import { encodeWav } from "./wav.js";

/** Sample rate of every synthesized sound. */
export const SOUND_SAMPLE_RATE = 22050;

/** Length of each sound in milliseconds. */
export const SOUND_DURATION_MS: Readonly<Record<PlayableSound, number>> = {
  [Sound.FLAP]: 120,
  [Sound.POINT]: 250,
  [Sound.DIE]: 400,
};

/** The sounds that have audio: every Sound but UNSPECIFIED. */
export type PlayableSound = Sound.FLAP | Sound.POINT | Sound.DIE;

export const PLAYABLE_SOUNDS: readonly PlayableSound[] = [Sound.FLAP, Sound.POINT, Sound.DIE];

export function isPlayableSound(value: unknown): value is PlayableSound {
  return value === Sound.FLAP || value === Sound.POINT || value === Sound.DIE;
}

const TAU = 2 * Math.PI;
/** Peak level after normalisation (leaves headroom below full scale). */
const PEAK = 0.85;
/** Linear fade over the last milliseconds so no sound ends with a click. */
const TAIL_FADE_MS = 8;

/**
 * Synthesizes `sound` as a complete mono 16-bit PCM WAV file at SOUND_SAMPLE_RATE.
 * The output is deterministic: the same bytes on every call.
 */
export function synthesizeSound(sound: Sound): Uint8Array {
  if (!isPlayableSound(sound)) {
    throw new RangeError(`no audio for sound ${String(sound)}`);
  }
  const n = Math.round((SOUND_DURATION_MS[sound] / 1000) * SOUND_SAMPLE_RATE);
  const samples = new Float64Array(n);
  switch (sound) {
    case Sound.FLAP:
      renderFlap(samples);
      break;
    case Sound.POINT:
      renderPoint(samples);
      break;
    case Sound.DIE:
      renderDie(samples);
      break;
  }
  finish(samples);
  return encodeWav(samples, SOUND_SAMPLE_RATE);
}

/** Short upward chirp over a band of rising noise (a wing whoosh). */
function renderFlap(out: Float64Array): void {
  const n = out.length;
  const noise = mulberry32(0x0f1a9);
  let phase = 0;
  let lpFast = 0;
  let lpSlow = 0;
  for (let i = 0; i < n; i++) {
    const t = i / SOUND_SAMPLE_RATE;
    const x = i / n; // 0..1 through the sound
    const freq = 380 * (1150 / 380) ** x;
    phase += (TAU * freq) / SOUND_SAMPLE_RATE;
    const chirp = Math.sin(phase) + 0.25 * Math.sin(2 * phase);

    // Band-passed noise whose upper edge rises with the chirp.
    const w = noise();
    lpFast += onePoleCoefficient(800 + 2700 * x) * (w - lpFast);
    lpSlow += onePoleCoefficient(250) * (w - lpSlow);
    const whoosh = lpFast - lpSlow;

    const env = attack(t, 0.008) * Math.exp(-t / 0.045);
    out[i] = env * (0.6 * chirp + 1.6 * whoosh);
  }
}

/** Bright two-note ding: B5 then E6, each with a few harmonics and a bell-like decay. */
function renderPoint(out: Float64Array): void {
  const n = out.length;
  const split = Math.round(0.09 * SOUND_SAMPLE_RATE);
  for (let i = 0; i < n; i++) {
    const t = i / SOUND_SAMPLE_RATE;
    let s = 0;
    if (i < split) {
      // First note, released over the last 5 ms of its slot.
      const release = Math.min(1, (split - i) / (0.005 * SOUND_SAMPLE_RATE));
      s = bell(987.77, t, 0.06) * release;
    } else {
      s = bell(1318.51, t - split / SOUND_SAMPLE_RATE, 0.075);
    }
    out[i] = s;
  }
}

function bell(freq: number, t: number, decay: number): number {
  const p = TAU * freq * t;
  const tone = Math.sin(p) + 0.35 * Math.sin(2 * p) + 0.12 * Math.sin(3 * p);
  return attack(t, 0.002) * Math.exp(-t / decay) * tone;
}

/** Low thud (falling sine plus a noise knock) followed by a falling square-ish tone. */
function renderDie(out: Float64Array): void {
  const n = out.length;
  const noise = mulberry32(0xd1e);
  const toneStart = 0.08;
  const toneLength = n / SOUND_SAMPLE_RATE - toneStart;
  let thudPhase = 0;
  let tonePhase = 0;
  let knock = 0;
  for (let i = 0; i < n; i++) {
    const t = i / SOUND_SAMPLE_RATE;

    const thudFreq = 110 * (40 / 110) ** Math.min(1, t / 0.12);
    thudPhase += (TAU * thudFreq) / SOUND_SAMPLE_RATE;
    const thud = attack(t, 0.002) * Math.exp(-t / 0.045) * Math.sin(thudPhase);

    knock += onePoleCoefficient(600) * (noise() - knock);
    const knockEnv = attack(t, 0.001) * Math.exp(-t / 0.012);

    let tone = 0;
    if (t >= toneStart) {
      const u = t - toneStart;
      const x = u / toneLength;
      const freq = 700 * (120 / 700) ** x;
      tonePhase += (TAU * freq) / SOUND_SAMPLE_RATE;
      const wave = Math.sin(tonePhase) + Math.sin(3 * tonePhase) / 3 + Math.sin(5 * tonePhase) / 5;
      tone = attack(u, 0.01) * (1 - x) * Math.exp(-u / 0.3) * wave;
    }

    out[i] = 0.9 * thud + 1.2 * knockEnv * knock + 0.45 * tone;
  }
}

/** Tail fade and peak normalisation. */
function finish(samples: Float64Array): void {
  const n = samples.length;
  const fade = Math.round((TAIL_FADE_MS / 1000) * SOUND_SAMPLE_RATE);
  for (let i = Math.max(0, n - fade); i < n; i++) {
    samples[i] = (samples[i] ?? 0) * ((n - 1 - i) / fade);
  }
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  if (peak === 0) return;
  const gain = PEAK / peak;
  for (let i = 0; i < n; i++) samples[i] = (samples[i] ?? 0) * gain;
}

/** Linear attack from 0 to 1 over `seconds`. */
function attack(t: number, seconds: number): number {
  return t >= seconds ? 1 : t / seconds;
}

/** Smoothing coefficient of a one-pole low-pass filter with the given cutoff. */
function onePoleCoefficient(cutoffHz: number): number {
  return 1 - Math.exp((-TAU * cutoffHz) / SOUND_SAMPLE_RATE);
}

/** Seeded PRNG (mulberry32) returning values in [-1, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}
