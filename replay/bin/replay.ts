// Replays recorded games in headless Chromium against a deployment; one folder per run.
// Usage: see `pnpm replay --help` (replay/README.md).
import { parseReplayArgs, ReplayUsageError, USAGE } from "../src/run/options.js";
import { replay } from "../src/run/runner.js";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
try {
  const opts = await parseReplayArgs(argv, process.env["INIT_CWD"] ?? process.cwd());
  process.stdout.write(
    `replay: ${opts.traces.length} trace(s) × ${opts.runs} run(s) against ${opts.url} → ${opts.out}\n`,
  );
  const report = await replay(opts, (line) => process.stdout.write(`${line}\n`));
  process.stdout.write(
    `replay: ${report.ok} ok, ${report.failed} failed${report.retried ? `, ${report.retried} retried` : ""} of ${report.runs} runs\n`,
  );
  process.exit(report.failed > 0 ? 1 : 0);
} catch (err) {
  if (err instanceof ReplayUsageError) {
    process.stderr.write(`replay: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`replay: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
}
