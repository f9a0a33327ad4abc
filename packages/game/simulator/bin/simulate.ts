import { runCli } from "../src/cli.js";

// pnpm runs package scripts in the package directory; INIT_CWD is the directory it was invoked in
// (the workspace root when invoked from a subdirectory that has no package.json).
process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  cwd: process.env.INIT_CWD || process.cwd(),
});
