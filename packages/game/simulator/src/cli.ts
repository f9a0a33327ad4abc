import { readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { parseArgs } from "node:util";
import { TraceError, parseInt64, parseTrace } from "@flaplab/input-traces";
import { formatResult, simulateTrace } from "./simulate.js";

export const USAGE = "usage: pnpm simulate --trace <file> [--seed <int64>]";

export interface CliIo {
  readonly stdout: (line: string) => void;
  readonly stderr: (line: string) => void;
  /** Directory relative trace paths are resolved against. */
  readonly cwd: string;
}

class UsageError extends Error {}

/**
 * Runs the simulate CLI and returns its exit code: 0 with one JSON line on stdout, 2 for bad
 * arguments or a bad trace file (message on stderr), 1 for anything unexpected.
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  try {
    let values: { trace?: string; seed?: string; help?: boolean };
    try {
      ({ values } = parseArgs({
        args: [...args],
        options: { trace: { type: "string" }, seed: { type: "string" }, help: { type: "boolean", short: "h" } },
        strict: true,
        allowPositionals: false,
      }));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    if (values.trace === undefined || values.trace === "") throw new UsageError("missing --trace <file>");
    let seed: bigint | undefined;
    if (values.seed !== undefined) {
      seed = parseInt64(values.seed);
      if (seed === undefined) throw new UsageError(`--seed must be a decimal int64, got "${values.seed}"`);
    }
    const path = isAbsolute(values.trace) ? values.trace : resolve(io.cwd, values.trace);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot read trace file ${path}${code ? ` (${code})` : ""}`);
    }
    const trace = parseTrace(text, { fileName: path });
    if (seed === undefined && trace.seed === undefined) {
      throw new UsageError(`no seed: ${path} does not name one (FlappyGo traces are called <seed>.csv); pass --seed`);
    }
    if (seed !== undefined && trace.seed !== undefined && seed !== trace.seed) {
      io.stderr(`simulate: note: --seed ${seed} overrides the trace's seed ${trace.seed}`);
    }
    io.stdout(formatResult(simulateTrace(trace, seed !== undefined ? { seed } : {})));
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof TraceError) {
      io.stderr(`simulate: ${err.message}`);
      if (err instanceof UsageError) io.stderr(USAGE);
      return 2;
    }
    if (err instanceof RangeError) {
      // The trace's viewport or bird cannot be played.
      io.stderr(`simulate: ${err.message}`);
      return 2;
    }
    io.stderr(`simulate: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}
