import { type BirdBox, DEFAULT_BIRD, DEFAULT_VIEWPORT, TICK_MS, type Viewport } from "@flaplab/physics";
import { FLAPLAB_TRACE_FORMAT, type Trace } from "@flaplab/input-traces";
import type { GamePlan } from "./plan.js";

export interface TraceOptions {
  /** Tick period in ms (default 33). */
  readonly tickMs?: number;
  readonly viewport?: Viewport;
  readonly bird?: BirdBox;
  /** ISO 8601 time for `recordedAt`; left out when not given. */
  readonly recordedAt?: string;
}

/**
 * A plan as a FlapLab trace (`flaplab-trace/1`): each flap pressed in the middle of the tick
 * period before its tick, `t = (tick - 1) * tickMs + floor(tickMs / 2)` ms after the start press
 * (16 ms into the period at 33 ms), with the planned tick recorded.
 */
export function planTrace(seed: bigint, plan: Pick<GamePlan, "flapTicks">, opts: TraceOptions = {}): Trace {
  const tickMs = opts.tickMs ?? TICK_MS;
  if (!Number.isInteger(tickMs) || tickMs < 2) throw new RangeError(`tickMs must be an integer ≥ 2, got ${tickMs}`);
  const ticks = [...new Set(plan.flapTicks)].sort((a, b) => a - b);
  for (const k of ticks) if (!Number.isInteger(k) || k < 1) throw new RangeError(`flap ticks must be integers ≥ 1, got ${k}`);
  const half = Math.floor(tickMs / 2);
  return {
    format: "flaplab-json",
    seed,
    viewport: opts.viewport ?? DEFAULT_VIEWPORT,
    bird: opts.bird ?? DEFAULT_BIRD,
    startMs: 0,
    flapOffsetsMs: ticks.map((k) => (k - 1) * tickMs + half),
    recordedTicks: ticks,
    dropLastInput: false,
    ...(opts.recordedAt !== undefined ? { recordedAt: opts.recordedAt } : {}),
    source: "autopilot",
  };
}

/**
 * `planTrace` as the text of a FlapLab JSON trace file, one input per line, with
 * `"dropLastInput": false` spelled out: the last flap counts.
 */
export function traceFromPlan(seed: bigint, plan: Pick<GamePlan, "flapTicks">, opts: TraceOptions = {}): string {
  const trace = planTrace(seed, plan, opts);
  const head: Record<string, unknown> = {
    format: FLAPLAB_TRACE_FORMAT,
    seed: seed.toString(),
    viewport: trace.viewport,
    bird: trace.bird,
    dropLastInput: false,
    ...(trace.recordedAt !== undefined ? { recordedAt: trace.recordedAt } : {}),
    source: trace.source,
  };
  const fields = Object.entries(head).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const ticks = trace.recordedTicks ?? [];
  const inputs = trace.flapOffsetsMs.map((t, i) => JSON.stringify({ t, tick: ticks[i] }));
  const list = inputs.length === 0 ? "[]" : `[\n    ${inputs.join(",\n    ")}\n  ]`;
  return `{\n${[...fields, `  "inputs": ${list}`].join(",\n")}\n}\n`;
}

