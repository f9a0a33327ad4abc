// Converts a FlapLab call log (NDJSON) to FlappyGo's stats.csv layout.
// Usage: rpc-csv [log.ndjson ...]   (reads stdin when no file is given; writes CSV to stdout)
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { text } from "node:stream/consumers";
import { parseArgs } from "node:util";
import { callLogToFlappyGoCsv } from "../src/call-log.js";

const { positionals, values } = parseArgs({ allowPositionals: true, options: { help: { type: "boolean", short: "h" } } });
if (values.help) {
  process.stdout.write("usage: pnpm rpc-csv [log.ndjson ...] > stats.csv\n");
  process.exit(0);
}
const base = process.env["INIT_CWD"] ?? process.cwd();
try {
  const inputs = positionals.length === 0
    ? [await text(process.stdin)]
    : await Promise.all(positionals.map((p) => readFile(resolve(base, p), "utf8")));
  const { csv, rows, skipped } = callLogToFlappyGoCsv(inputs.join("\n"));
  process.stdout.write(csv);
  process.stderr.write(`rpc-csv: ${rows} rows (${skipped} other lines skipped)\n`);
} catch (err) {
  process.stderr.write(`rpc-csv: ${(err as Error).message}\n`);
  process.exit(2);
}
