// Writes topologies/topology.schema.json from the topology file schema (src/topology.ts), so editors
// complete and check topology files. Usage: pnpm --filter @flaplab/runtime topology-schema [--check]
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { topologySchemaText } from "../src/topology.js";

const file = resolve(import.meta.dirname, "../../../../topologies/topology.schema.json");
const text = topologySchemaText();
if (process.argv.includes("--check")) {
  const current = await readFile(file, "utf8").catch(() => "");
  if (current !== text) {
    process.stderr.write(`${file} is out of date: run pnpm --filter @flaplab/runtime topology-schema\n`);
    process.exit(1);
  }
} else {
  await writeFile(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
