// Section 7: tick lateness and input → ack delay while the engine calls PlayMusic for every flap,
// with music in the same process (monolith, direct calls) and in another process (microservices,
// Connect binary over HTTP/1.1), against the same games with PlayMusic answered at once (idle).
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { type Child, startChild } from "./child.js";
import type { CpuSample } from "./rpc-server.js";
import type { RunOptions, SectionResult } from "./section.js";
import type { TickCallsMode, TickCallsResult } from "./tick-calls-child.js";
import { count, ratio, sig, tailCells } from "./table.js";
import { benchKeys } from "./rpc-fixture.js";

const FULL = { games: 100, rampMs: 1000, settleMs: 500, measureMs: 6000, rounds: 2 };
const QUICK = { games: 10, rampMs: 100, settleMs: 100, measureMs: 500, rounds: 1 };

const LABELS: Record<TickCallsMode, string> = {
  idle: "no call (PlayMusic answered at once in the engine)",
  direct: "monolith: music in the engine's process (direct call)",
  networked: "microservices: music in another process (Connect binary, HTTP/1.1)",
};

/** A tick or ack may be at most this much later with the calls than without them (p99, µs). */
export const CALLS_P99_MARGIN_US = 500;

export async function runTickCalls(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const plan = opts.quick ? QUICK : FULL;
  const dir = await mkdtemp(join(opts.workDir, "ticks-"));
  await benchKeys(dir); // create the keys once, before two processes read them
  const rows: (TickCallsResult & { round: number; musicServerCpu?: number })[] = [];
  let music: Child | undefined;
  try {
    music = await startChild("music-server.ts");
    const musicPort = await music.request<number>({ type: "start", keysDir: dir, games: plan.games });
    for (let round = 0; round < plan.rounds; round++) {
      for (const mode of ["idle", "direct", "networked"] as const) {
        const engine = await startChild("tick-calls-child.ts", ENGINE_NODE_FLAGS);
        try {
          const before = await music.request<CpuSample>({ type: "cpu" });
          const r = await engine.request<TickCallsResult>(
            { type: "step", mode, keysDir: dir, musicPort, games: plan.games, rampMs: plan.rampMs, settleMs: plan.settleMs, measureMs: plan.measureMs },
            120_000,
          );
          const after = await music.request<CpuSample>({ type: "cpu" });
          const musicServerCpu = mode === "networked" ? (after.cpuUs - before.cpuUs) / Math.max(1, after.wallUs - before.wallUs) : undefined;
          rows.push({ ...r, round, ...(musicServerCpu === undefined ? {} : { musicServerCpu }) });
          opts.log(
            `  ticks ${mode} (round ${round + 1}): lateness p50 ${sig(r.lateness.p50)} p99 ${sig(r.lateness.p99)} µs; ack p50 ${sig(r.ack.p50)} p99 ${sig(r.ack.p99)} µs; ` +
              `${r.musicCalls} PlayMusic calls (${r.musicErrors} failed), p50 ${sig(r.musicLatency.p50)} µs`,
          );
        } finally {
          await engine.stop();
        }
      }
    }
  } finally {
    await music?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const idleOf = (round: number) => rows.find((r) => r.round === round && r.mode === "idle")!;
  const worst = (mode: TickCallsMode, pick: (r: TickCallsResult) => number | null) =>
    Math.max(...rows.filter((r) => r.mode === mode).map((r) => (pick(r) ?? Infinity) - (pick(idleOf(r.round)) ?? 0)));
  const goals = (["direct", "networked"] as const).map((mode) => {
    const tick = worst(mode, (r) => r.lateness.p99);
    const ack = worst(mode, (r) => r.ack.p99);
    const calls = rows.filter((r) => r.mode === mode);
    const allCalled = calls.every((r) => r.musicCalls >= r.flaps && r.musicErrors === 0 && r.ended === 0);
    return {
      section: "7",
      goal: `PlayMusic on every flap (${mode === "direct" ? "monolith" : "microservices"}) adds ≤ ${CALLS_P99_MARGIN_US} µs to the p99 tick lateness and ack delay`,
      measured: `tick p99 +${sig(tick)} µs, ack p99 +${sig(ack)} µs (worst round); ${allCalled ? "every flap called, no failure" : "calls missing or failed"}`,
      met: opts.quick ? null : tick <= CALLS_P99_MARGIN_US && ack <= CALLS_P99_MARGIN_US && allCalled,
    };
  });
  return {
    id: "ticks",
    title: "7. Tick lateness and acks while the engine calls PlayMusic on every flap (µs)",
    table: {
      headers: ["Music", "Round", "Games", "Ticks", "Lateness p50", "p99", "p99.9", "max", "Ack p50", "Ack p99", "Ack max", "Flaps", "PlayMusic calls", "Call p50", "Call p99", "Failed", "Engine CPU µs/frame", "Music server CPU", "p99 ÷ idle"],
      align: ["l", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
      rows: rows.map((r) => [
        LABELS[r.mode],
        String(r.round + 1),
        count(r.games),
        count(r.ticks),
        ...tailCells(r.lateness),
        sig(r.ack.p50),
        sig(r.ack.p99),
        sig(r.ack.max),
        count(r.flaps),
        count(r.musicCalls),
        r.mode === "idle" ? "–" : sig(r.musicLatency.p50),
        r.mode === "idle" ? "–" : sig(r.musicLatency.p99),
        count(r.musicErrors),
        sig(r.cpuPerFrameUs),
        r.musicServerCpu === undefined ? "–" : `${Math.round(r.musicServerCpu * 100)}%`,
        r.mode === "idle" ? "1×" : ratio(r.lateness.p99, idleOf(r.round).lateness.p99),
      ]),
    },
    notes: [
      `${plan.games} games of the easy seed with the section-3 flap schedule, in a fresh engine process per row (TickScheduler, GameTable, game session handler, in-memory sessions), started over ${plan.rampMs / 1000} s, settled ${plan.settleMs / 1000} s, measured ${plan.measureMs / 1000} s; ${plan.rounds} round(s) of the three rows in turn.`,
      `Every flap is one PlayMusic call (the engine calls music on each input it applies); the real music component answers and hands the clip to an open music stream per game. Networked: the music process runs the real host; the engine's runtime calls it with a component credential over the default network setting.`,
      `Lateness = tick start − its deadline. Ack = the input written into the session → the engine's input-ack frame sent. Call p50/p99 = PlayMusic as the engine's caller sees it (it does not wait for it: the call runs beside the tick).`,
    ],
    goals,
    data: { rows, plan },
    seconds: (performance.now() - started) / 1000,
  };
}
