/**
 * Plays the sound clips of the music stream. The AudioContext is created (or resumed) on the first
 * user gesture, as browsers require.
 */
export class SoundPlayer {
  private context: AudioContext | undefined;

  /** Call from a keydown / click handler. */
  unlock(): void {
    try {
      if (!this.context) this.context = new AudioContext({ latencyHint: "interactive" });
      if (this.context.state === "suspended") void this.context.resume().catch(() => undefined);
    } catch {
      // No Web Audio: clips are still logged, just not played.
    }
  }

  get ready(): boolean {
    return this.context !== undefined;
  }

  /**
   * Decodes `audio` (e.g. WAV bytes) and plays it at once. Rejects when there is no AudioContext
   * or decoding fails; the caller logs it.
   */
  async play(audio: Uint8Array): Promise<void> {
    const ctx = this.context;
    if (!ctx) throw new Error("audio not started yet (no key press or click so far)");
    // decodeAudioData detaches its buffer: give it a copy.
    const copy = audio.slice().buffer;
    const buffer = await ctx.decodeAudioData(copy);
    const source = ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(ctx.destination);
    source.start();
  }
}
