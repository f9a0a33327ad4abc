// `pnpm load …`: parse the arguments, run the load, print the summary, write --out.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseTrace } from "@flaplab/input-traces";
import { runLoad } from "./coordinator.js";
import { LoadUsageError, parseLoadArgs, USAGE } from "./options.js";
import { mergeRun, renderSummary, writeOut } from "./summary.js";

/** A trace a bot can play: readable, a trace, with its seed. */
async function checkTrace(path: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new LoadUsageError(`--trace ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let seed: bigint | undefined;
  try {
    seed = parseTrace(text).seed;
  } catch (err) {
    throw new LoadUsageError(`--trace ${path} is not a trace: ${(err as Error).message}`);
  }
  if (seed === undefined) throw new LoadUsageError(`--trace ${path} names no seed (a FlappyGo trace is named <seed>.csv)`);
}

/** The whole command; returns its exit code: 0 done, 1 the run failed (warm-up, lost workers), 2 bad arguments. */
export async function runLoadCli(args: readonly string[], io: { stdout: (s: string) => void; stderr: (s: string) => void; cwd: string }): Promise<number> {
  let options: ReturnType<typeof parseLoadArgs>;
  try {
    options = parseLoadArgs(args);
    if (options.out !== undefined) options = { ...options, out: resolve(io.cwd, options.out) };
    if (options.trace !== undefined) {
      options = { ...options, trace: resolve(io.cwd, options.trace) };
      await checkTrace(options.trace!);
    }
  } catch (err) {
    if (err instanceof LoadUsageError) {
      io.stderr(`pnpm load: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  let run: Awaited<ReturnType<typeof runLoad>>;
  try {
    run = await runLoad(options, { progress: (line) => io.stderr(`${line}\n`) });
  } catch (err) {
    io.stderr(`pnpm load: ${(err as Error).message}\n`);
    return 1;
  }
  const merged = mergeRun(run);
  io.stdout(`${renderSummary(merged.summary)}\n`);
  if (options.out !== undefined) {
    await writeOut(options.out, run, merged);
    io.stdout(`written: ${options.out}/summary.json and its CSVs\n`);
  }
  return run.lost.length > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const code = await runLoadCli(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    cwd: process.env["INIT_CWD"] ?? process.cwd(),
  });
  process.exitCode = code;
}
