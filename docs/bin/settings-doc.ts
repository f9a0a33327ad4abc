// Writes the tables of docs/settings.md from the packages' settings declarations.
// Usage: pnpm docs:settings [--check]   (--check: exit 1 when the file is not what it would write)
import { writeFile } from "node:fs/promises";
import { expectedSettingsDoc, SETTINGS_DOC } from "../src/settings-doc.js";

const { current, expected } = await expectedSettingsDoc();
if (process.argv.includes("--check")) {
  if (current !== expected) {
    process.stderr.write(`${SETTINGS_DOC} is out of date: run pnpm docs:settings\n`);
    process.exit(1);
  }
} else if (current === expected) {
  process.stdout.write(`${SETTINGS_DOC} is up to date\n`);
} else {
  await writeFile(SETTINGS_DOC, expected);
  process.stdout.write(`wrote ${SETTINGS_DOC}\n`);
}
