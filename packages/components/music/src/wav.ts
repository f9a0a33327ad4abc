/** WAV (RIFF) encoding of mono 16-bit PCM. */

export const WAV_HEADER_BYTES = 44;

/**
 * Encodes samples in [-1, 1] as a complete mono 16-bit little-endian PCM WAV file.
 * Values outside the range are clipped.
 */
export function encodeWav(samples: ArrayLike<number>, sampleRate: number): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) {
    throw new RangeError(`sample rate must be a positive integer, got ${sampleRate}`);
  }
  const channels = 1;
  const bytesPerSample = 2;
  const dataBytes = samples.length * bytesPerSample * channels;
  const out = new Uint8Array(WAV_HEADER_BYTES + dataBytes);
  const view = new DataView(out.buffer);
  const ascii = (offset: number, text: string): void => {
    for (let i = 0; i < text.length; i++) out[offset + i] = text.charCodeAt(i);
  };

  ascii(0, "RIFF");
  view.setUint32(4, WAV_HEADER_BYTES - 8 + dataBytes, true); // RIFF chunk size: file size - 8
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, 16, true); // fmt chunk size (PCM)
  view.setUint16(20, 1, true); // audio format 1 = PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * bytesPerSample, true); // byte rate
  view.setUint16(32, channels * bytesPerSample, true); // block align
  view.setUint16(34, 8 * bytesPerSample, true); // bits per sample
  ascii(36, "data");
  view.setUint32(40, dataBytes, true);

  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i] ?? 0));
    view.setInt16(WAV_HEADER_BYTES + i * bytesPerSample, Math.round(s < 0 ? s * 0x8000 : s * 0x7fff), true);
  }
  return out;
}
