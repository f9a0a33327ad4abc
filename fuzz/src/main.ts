// `pnpm fuzz`: every target, 10,000 cases each by default, against a real monolith; prints the table
// and exits non-zero on any crash, hang or lost run.
import { parseArgs } from "node:util";
import { runFuzz } from "./suite.js";

const { values } = parseArgs({
  options: {
    cases: { type: "string", default: "10000" },
    seed: { type: "string", default: "20261124" },
    target: { type: "string", multiple: true },
    only: { type: "string" },
    details: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(`usage: pnpm fuzz [--cases N] [--seed S] [--target <name part>]… [--only i,j,…]
  --cases   cases per target (default 10000)
  --seed    fast-check seed (default 20261124); case i of a target is reproducible from it
  --target  run only the targets whose name contains this text (repeatable)
  --only    run only these case indices (with --seed, to reproduce a finding)
  --details print how often each outcome was seen, per target`);
  process.exit(0);
}
const cases = Number(values.cases);
const seed = Number(values.seed);
if (!Number.isInteger(cases) || cases < 1) throw new Error(`--cases must be a positive integer, got ${values.cases}`);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
const only = values.only?.split(",").map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--only takes case indices, got ${s}`);
  return n;
});

const report = await runFuzz({ cases, seed, filter: values.target, only, details: values.details, log: (l) => console.log(l) });
process.exit(report.ok ? 0 : 1);
