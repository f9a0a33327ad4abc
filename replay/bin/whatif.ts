import { runWhatifCli } from "../src/whatif/index.js";

// pnpm runs scripts in the package folder; INIT_CWD is where the command was typed.
const code = await runWhatifCli(process.argv.slice(2), {
  cwd: process.env["INIT_CWD"] ?? process.cwd(),
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
});
process.exitCode = code;
