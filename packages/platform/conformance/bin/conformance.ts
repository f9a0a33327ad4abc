// Runs Connect's conformance suite against the host (server) and the runtime's clients (client),
// one protocol at a time, and prints passing and failing case counts per protocol, then each
// failing case, marked when it is a known deviation. Exits 1 on a failure no deviation covers.
//
//   pnpm conformance            both sides
//   pnpm conformance server     the host only
//   pnpm conformance client     the runtime's clients only
import { knownDeviations, judge } from "../src/deviations.js";
import { failureDetail, PROTOCOLS, runSuite, type Side, type SuiteResult } from "../src/suite.js";

const arg = process.argv[2];
if (arg !== undefined && arg !== "server" && arg !== "client") {
  process.stderr.write(`usage: pnpm conformance [server|client] (got ${arg})\n`);
  process.exit(2);
}
const sides: Side[] = arg === undefined ? ["server", "client"] : [arg];

const results: SuiteResult[] = [];
for (const side of sides) {
  for (const protocol of PROTOCOLS) {
    process.stderr.write(`conformance: ${side} ${protocol}...\n`);
    results.push(await runSuite(side, protocol));
  }
}

const rows = results.map((r) => `| ${r.side} | ${r.protocol} | ${r.total} | ${r.passed} | ${r.failed} |`);
console.log(["| side | protocol | cases | passed | failed |", "|---|---|---:|---:|---:|", ...rows].join("\n"));

let unexpected = 0;
for (const side of sides) {
  const known = await knownDeviations(side);
  const failures = results.filter((r) => r.side === side).flatMap((r) => r.failures);
  const verdict = judge(failures, known);
  unexpected += verdict.unexpected.length;
  for (const r of results.filter((x) => x.side === side)) {
    for (const name of r.failures) {
      const unexpected = verdict.unexpected.includes(name);
      console.log(`${side} ${unexpected ? "FAILED" : "known deviation"}: ${name}`);
      if (unexpected) console.log(failureDetail(r.output, name));
    }
  }
  for (const pattern of verdict.stale) console.log(`${side} known deviation no longer failing: ${pattern}`);
}
console.log(`${results.reduce((n, r) => n + r.passed, 0)} passed, ${results.reduce((n, r) => n + r.failed, 0)} failed, ${unexpected} not known deviations`);
process.exit(unexpected > 0 ? 1 : 0);
