import { writeFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseInt64 } from "@flaplab/input-traces";
import { DEFAULT_ROBUST_TICKS, DEFAULT_TARGET_SCORE, PlanError, planGame } from "./autopilot/plan.js";
import { traceFromPlan } from "./autopilot/trace.js";
import type { CliIo } from "./cli.js";

export const AUTOPILOT_USAGE = "usage: pnpm autopilot --seed <int64> [--score N] [--robust N] --out <file.json>";

class UsageError extends Error {}

function wholeNumber(name: string, text: string, max: number): number {
  if (!/^[0-9]+$/.test(text) || Number(text) > max) {
    throw new UsageError(`--${name} must be a whole number in 0…${max}, got "${text}"`);
  }
  return Number(text);
}

/**
 * Runs the autopilot CLI and returns its exit code: plans a game for `--seed`, writes it as a
 * FlapLab trace to `--out` and prints one JSON line `{seed, score, ticks, flaps, minMargin, out}`;
 * 2 for bad arguments or an unwritable file (message on stderr), 1 for anything unexpected.
 */
export async function runAutopilotCli(args: readonly string[], io: CliIo): Promise<number> {
  try {
    let values: { seed?: string; score?: string; robust?: string; out?: string; help?: boolean };
    try {
      ({ values } = parseArgs({
        args: [...args],
        options: {
          seed: { type: "string" },
          score: { type: "string" },
          robust: { type: "string" },
          out: { type: "string" },
          help: { type: "boolean", short: "h" },
        },
        strict: true,
        allowPositionals: false,
      }));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (values.help) {
      io.stdout(AUTOPILOT_USAGE);
      return 0;
    }
    if (values.seed === undefined || values.seed === "") throw new UsageError("missing --seed <int64>");
    const seed = parseInt64(values.seed);
    if (seed === undefined) throw new UsageError(`--seed must be a decimal int64, got "${values.seed}"`);
    if (values.out === undefined || values.out === "") throw new UsageError("missing --out <file.json>");
    const targetScore = values.score === undefined ? undefined : wholeNumber("score", values.score, 1000);
    const robustTicks = values.robust === undefined ? undefined : wholeNumber("robust", values.robust, 10);
    const out = isAbsolute(values.out) ? values.out : resolve(io.cwd, values.out);

    const plan = planGame(seed, {
      ...(targetScore !== undefined ? { targetScore } : {}),
      ...(robustTicks !== undefined ? { robustTicks } : {}),
    });
    const wanted = targetScore ?? DEFAULT_TARGET_SCORE;
    if (plan.score < wanted) {
      io.stderr(
        plan.courseEnd
          ? `autopilot: note: the course ends at score ${plan.score}`
          : `autopilot: note: no schedule found that reaches ${wanted} with every flap ±${robustTicks ?? DEFAULT_ROBUST_TICKS} ticks; planned ${plan.score}`,
      );
    }
    try {
      await writeFile(out, traceFromPlan(seed, plan));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot write ${out}${code ? ` (${code})` : ""}`);
    }
    io.stdout(
      JSON.stringify({
        seed: seed.toString(),
        score: plan.score,
        ticks: plan.ticks,
        flaps: plan.flapTicks.length,
        minMargin: Math.round(plan.minMargin * 100) / 100,
        out,
      }),
    );
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`autopilot: ${err.message}`);
      io.stderr(AUTOPILOT_USAGE);
      return 2;
    }
    if (err instanceof PlanError) {
      io.stderr(`autopilot: ${err.message}`);
      return 1;
    }
    io.stderr(`autopilot: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}
