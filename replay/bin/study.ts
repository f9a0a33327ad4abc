// The whole study in one command: every deployment × every trace × N runs, then one report.
import { resolve } from "node:path";
import { ReplayUsageError } from "../src/run/options.js";
import { parseStudyArgs, runStudy, STUDY_USAGE, stopStudyDeployments } from "../src/study/study.js";

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  process.stdout.write(`${STUDY_USAGE}\n`);
  process.exit(0);
}
const repo = resolve(import.meta.dirname, "../..");
// Interrupted: stop the deployments the study started (their servers would hold ports and CPU), then exit.
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  process.once(signal, () => {
    process.stderr.write(`study: ${signal}: stopping the deployments\n`);
    void stopStudyDeployments().finally(() => process.exit(code));
  });
}
try {
  const opts = parseStudyArgs(argv, process.env["INIT_CWD"] ?? process.cwd(), repo);
  const result = await runStudy(opts, (line) => process.stdout.write(`${line}\n`));
  process.exit(result.failed > 0 ? 1 : 0);
} catch (err) {
  process.stderr.write(`study: ${err instanceof ReplayUsageError ? err.message : ((err as Error).stack ?? String(err))}\n`);
  process.exit(err instanceof ReplayUsageError ? 2 : 1);
}
