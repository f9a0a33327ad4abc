// What an ALB listener rule may hold: the AWS provider's rule for a condition (exactly one field)
// and the ELB quotas and API limits (rules per load balancer, condition values per rule, pattern
// lengths, priorities). The plan checks its rules with this before anything is deployed.

/** The load balancer's limits (ELB quotas and the listener-rule API), checked for every planned rule. */
export const ALB_LIMITS = {
  /** Rules per load balancer, not counting the default rule. */
  rulesPerLoadBalancer: 100,
  /** Condition values (patterns) per rule. */
  valuesPerRule: 5,
  /** Characters of one pattern (path, host or header value). */
  patternLength: 128,
  /** Characters of an HTTP header name. */
  headerNameLength: 40,
  minPriority: 1,
  maxPriority: 50_000,
} as const;


/**
 * One condition of a listener rule in the AWS provider's shape (`aws.lb.ListenerRule`'s
 * `conditions`): exactly one field per condition object, as the provider requires.
 */
export type ListenerCondition =
  | { readonly pathPattern: { readonly values: readonly string[] } }
  | { readonly httpHeader: { readonly httpHeaderName: string; readonly values: readonly string[] } }
  | { readonly hostHeader: { readonly values: readonly string[] } };

/**
 * What the AWS provider and the load balancer would refuse in a listener's rules (empty when
 * nothing): a condition with other than exactly one field, two path or host conditions in one
 * rule, more than five condition values in a rule, a pattern over 128 characters, a header name
 * over 40 characters or naming Host, a priority outside 1–50,000 or used twice, over 100 rules.
 * Rules whose conditions are not in the ListenerCondition shape are read as plain objects.
 */
export function listenerRuleProblems(rules: readonly { readonly priority: number; readonly conditions: readonly object[] }[]): string[] {
  const problems: string[] = [];
  const seen = new Set<number>();
  if (rules.length > ALB_LIMITS.rulesPerLoadBalancer) problems.push(`${rules.length} rules, more than ${ALB_LIMITS.rulesPerLoadBalancer}`);
  for (const rule of rules) {
    const at = `rule ${rule.priority}`;
    if (!Number.isInteger(rule.priority) || rule.priority < ALB_LIMITS.minPriority || rule.priority > ALB_LIMITS.maxPriority) {
      problems.push(`${at}: priority outside ${ALB_LIMITS.minPriority}–${ALB_LIMITS.maxPriority}`);
    }
    if (seen.has(rule.priority)) problems.push(`${at}: priority used twice`);
    seen.add(rule.priority);
    if (rule.conditions.length === 0) problems.push(`${at}: no condition`);
    let values = 0;
    const once = new Map<string, number>();
    for (const condition of rule.conditions) {
      const fields = Object.entries(condition).filter(([, v]) => v !== undefined);
      if (fields.length !== 1) {
        problems.push(`${at}: a condition sets ${fields.map(([k]) => k).join(" and ") || "nothing"} (exactly one field per condition)`);
        continue;
      }
      const [field, body] = fields[0]! as [string, { values?: readonly string[]; httpHeaderName?: string }];
      if (field === "pathPattern" || field === "hostHeader" || field === "httpRequestMethod" || field === "sourceIp") {
        once.set(field, (once.get(field) ?? 0) + 1);
      }
      const patterns = body.values ?? [];
      if (patterns.length === 0) problems.push(`${at}: ${field} has no value`);
      values += patterns.length;
      for (const v of patterns) {
        if (v.length > ALB_LIMITS.patternLength) problems.push(`${at}: ${field} value of ${v.length} characters (at most ${ALB_LIMITS.patternLength})`);
      }
      if (field === "httpHeader") {
        const name = body.httpHeaderName ?? "";
        if (name.length === 0 || name.length > ALB_LIMITS.headerNameLength) problems.push(`${at}: header name "${name}" must have 1–${ALB_LIMITS.headerNameLength} characters`);
        if (name.toLowerCase() === "host") problems.push(`${at}: the Host header needs a hostHeader condition`);
      }
    }
    for (const [field, n] of once) if (n > 1) problems.push(`${at}: ${n} ${field} conditions (at most one)`);
    if (values > ALB_LIMITS.valuesPerRule) problems.push(`${at}: ${values} condition values (at most ${ALB_LIMITS.valuesPerRule})`);
  }
  return problems;
}
