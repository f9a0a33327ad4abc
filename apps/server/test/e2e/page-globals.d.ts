// The page's globals as the browser tests read them: these callbacks run inside Chromium.
interface PageLogRow {
  type: string;
  direction: string;
  time: number;
  seq?: number;
  note?: string;
}
interface PageAutomation {
  state: "login" | "ready" | "playing" | "over";
  log(): PageLogRow[];
  summary(): {
    framesReceived: number;
    acksReceived: number;
    frameBytesMean: number | null;
    framesUnder1kbShare: number | null;
    inputToEffectMedianMs: number | null;
    inputToEffectCount: number;
    inputToNextFrameMedianMs: number | null;
    inputToNextFrameCount: number;
    inputToAudioMedianMs: number | null;
    inputToAudioCount: number;
    [key: string]: unknown;
  } | null;
  lastGame: { gameId: string; seed: string; score: number; ticks: number; recorded: boolean; error: string | null } | null;
  token(): string | null;
  tick(): number | null;
  pressAtTicks(ticks: readonly number[]): void;
  readonly events: EventTarget;
}
declare const window: {
  flaplab: PageAutomation;
  flaplabPalette: { sky: string; pipe: string; bird: string; scoreText: string };
};
declare const document: { querySelector(selector: string): { textContent: string | null } | null };
