/** A strict reader for the WAV files under test: walks the RIFF chunks instead of assuming offsets. */
export interface ParsedWav {
  readonly riffSize: number;
  readonly audioFormat: number;
  readonly channels: number;
  readonly sampleRate: number;
  readonly byteRate: number;
  readonly blockAlign: number;
  readonly bitsPerSample: number;
  readonly dataSize: number;
  /** Samples scaled to [-1, 1). */
  readonly samples: Float64Array;
}

export function readWav(bytes: Uint8Array): ParsedWav {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number): string =>
    String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (bytes.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") {
    throw new Error("not a RIFF/WAVE file");
  }
  const riffSize = view.getUint32(4, true);
  let fmt: Omit<ParsedWav, "riffSize" | "dataSize" | "samples"> | undefined;
  let data: { offset: number; size: number } | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.byteLength) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (body + size > bytes.byteLength) throw new Error(`chunk ${id} runs past the end of the file`);
    if (id === "fmt ") {
      fmt = {
        audioFormat: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        byteRate: view.getUint32(body + 8, true),
        blockAlign: view.getUint16(body + 12, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      data = { offset: body, size };
    }
    offset = body + size + (size % 2);
  }
  if (!fmt) throw new Error("no fmt chunk");
  if (!data) throw new Error("no data chunk");
  if (fmt.bitsPerSample !== 16) throw new Error(`unsupported bits per sample ${fmt.bitsPerSample}`);
  const samples = new Float64Array(data.size / 2);
  for (let i = 0; i < samples.length; i++) {
    samples[i] = view.getInt16(data.offset + i * 2, true) / 32768;
  }
  return { riffSize, ...fmt, dataSize: data.size, samples };
}

export function rms(samples: ArrayLike<number>, from = 0, to = samples.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += (samples[i] ?? 0) ** 2;
  return Math.sqrt(sum / Math.max(1, to - from));
}

/** Magnitude of one frequency in a window (Goertzel), normalised by window length. */
export function toneLevel(
  samples: ArrayLike<number>,
  sampleRate: number,
  freq: number,
  from: number,
  to: number,
): number {
  const coeff = 2 * Math.cos((2 * Math.PI * freq) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  for (let i = from; i < to; i++) {
    const s0 = (samples[i] ?? 0) + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return Math.sqrt(Math.max(0, s1 * s1 + s2 * s2 - coeff * s1 * s2)) / (to - from);
}

/** The strongest of `candidates` (Hz) in a window. */
export function dominantFrequency(
  samples: ArrayLike<number>,
  sampleRate: number,
  from: number,
  to: number,
  candidates: readonly number[],
): number {
  let best = candidates[0] ?? 0;
  let bestLevel = -1;
  for (const f of candidates) {
    const level = toneLevel(samples, sampleRate, f, from, to);
    if (level > bestLevel) {
      bestLevel = level;
      best = f;
    }
  }
  return best;
}
