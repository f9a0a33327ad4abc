// Every stage's 443 listener rules as they would reach AWS: sst.config.ts run against stand-ins,
// with SST 4.17.1's Service building its rules (./sst-stand-ins.ts) and the config's transforms
// applied, then checked against what the AWS provider and ELB refuse (src/listener-limits.ts):
// one field per condition object, at most five condition values per rule, unique priorities in
// 1–50,000, patterns of at most 128 characters, at most 100 rules per load balancer.
import { beforeAll, describe, expect, it } from "vitest";
import { listenerRuleProblems } from "../src/listener-limits.js";
import { STAGES } from "../src/stages.js";
import { type AwsListenerRule, awsListenerRules, loadConfig, run } from "./sst-stand-ins.js";

const rulesByStage = new Map<string, AwsListenerRule[]>();

beforeAll(async () => {
  await loadConfig();
  for (const stage of STAGES) {
    await run(stage);
    rulesByStage.set(stage, awsListenerRules());
  }
});

const byLoadBalancer = (rules: readonly AwsListenerRule[]): Map<string, AwsListenerRule[]> => {
  const m = new Map<string, AwsListenerRule[]>();
  for (const r of rules) m.set(r.loadBalancer, [...(m.get(r.loadBalancer) ?? []), r]);
  return m;
};

describe("listener rules as AWS gets them", () => {
  it.each(STAGES)("%s: every rule of every load balancer is one AWS accepts", (stage) => {
    const rules = rulesByStage.get(stage)!;
    expect(rules.length).toBeGreaterThan(0);
    for (const [lb, mine] of byLoadBalancer(rules)) {
      expect(listenerRuleProblems(mine), `${stage} ${lb}`).toEqual([]);
    }
  });

  it("has one field in each condition object, also where a rule has a path and a header", () => {
    const multiregion = rulesByStage.get("multiregion")!;
    const withHeader = multiregion.filter((r) => r.conditions.some((c) => c["httpHeader"] !== undefined));
    // Cross-region internal methods (caller header) and the WebTransport link (its subprotocols).
    expect(withHeader.length).toBeGreaterThan(0);
    for (const r of withHeader) {
      for (const c of r.conditions) expect(Object.values(c).filter((v) => v !== undefined), r.name).toHaveLength(1);
    }
  });
});

describe("listenerRuleProblems", () => {
  const rule = (priority: number, conditions: object[]) => ({ priority, conditions });
  const path = (p: string) => ({ pathPattern: { values: [p] } });

  it("accepts a path, a header and a host as three condition objects", () => {
    expect(
      listenerRuleProblems([rule(1, [path("/a*"), { httpHeader: { httpHeaderName: "x-h", values: ["*"] } }, { hostHeader: { values: ["a.example.org"] } }])]),
    ).toEqual([]);
  });

  it("names each thing AWS would refuse", () => {
    const problems = listenerRuleProblems([
      rule(0, [{ pathPattern: { values: ["/a"] }, httpHeader: { httpHeaderName: "x", values: ["*"] } }]),
      rule(0, [path("/b"), path("/c")]),
      rule(50_001, [{ pathPattern: { values: ["/1", "/2", "/3"] } }, { hostHeader: { values: ["a", "b", "c"] } }]),
      rule(7, [path(`/${"x".repeat(128)}`)]),
      rule(8, [{ httpHeader: { httpHeaderName: "Host", values: ["a"] } }]),
      rule(9, []),
    ]);
    expect(problems).toEqual([
      "rule 0: priority outside 1–50000",
      "rule 0: a condition sets pathPattern and httpHeader (exactly one field per condition)",
      "rule 0: priority outside 1–50000",
      "rule 0: priority used twice",
      "rule 0: 2 pathPattern conditions (at most one)",
      "rule 50001: priority outside 1–50000",
      "rule 50001: 6 condition values (at most 5)",
      "rule 7: pathPattern value of 129 characters (at most 128)",
      "rule 8: the Host header needs a hostHeader condition",
      "rule 9: no condition",
    ]);
  });

  it("counts the rules of one load balancer", () => {
    const many = Array.from({ length: 101 }, (_, i) => rule(i + 1, [path(`/p${i}`)]));
    expect(listenerRuleProblems(many)).toEqual(["101 rules, more than 100"]);
  });
});
