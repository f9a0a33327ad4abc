// An ALB listener's rule evaluation, from the ELB documentation: rules in priority order, the
// first whose conditions all match wins, else the default action (SST's: a fixed 403). Path
// patterns are case-sensitive and see the path without its query string; host and header
// patterns are case-insensitive; `*` is any run of characters and `?` one character.

export interface ListenerRequest {
  readonly host: string;
  /** Path and query, as in the request line. */
  readonly path: string;
  /** Header names in lower case. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface EvaluatedRule {
  readonly priority: number;
  readonly conditions: readonly Record<string, unknown>[];
  readonly action: string;
}

function wildcard(pattern: string, value: string, caseSensitive: boolean): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".")}$`, caseSensitive ? "" : "i");
  return re.test(value);
}

/** Whether one condition object holds for the request (every field it sets must match). */
function conditionMatches(condition: Record<string, unknown>, req: ListenerRequest): boolean {
  const path = req.path.split("?")[0]!;
  for (const [field, body] of Object.entries(condition)) {
    if (body === undefined) continue;
    const { values = [], httpHeaderName } = body as { values?: string[]; httpHeaderName?: string };
    if (field === "pathPattern" && !values.some((v) => wildcard(v, path, true))) return false;
    if (field === "hostHeader" && !values.some((v) => wildcard(v, req.host, false))) return false;
    if (field === "httpHeader") {
      const value = req.headers?.[String(httpHeaderName).toLowerCase()];
      if (value === undefined || !values.some((v) => wildcard(v, value, false))) return false;
    }
    if (!["pathPattern", "hostHeader", "httpHeader"].includes(field)) throw new Error(`condition field ${field} is not emulated`);
  }
  return true;
}

/** The action the listener takes for a request. */
export function listenerAction(rules: readonly EvaluatedRule[], req: ListenerRequest): string {
  const hit = [...rules].sort((a, b) => a.priority - b.priority).find((r) => r.conditions.every((c) => conditionMatches(c, req)));
  return hit?.action ?? "default 403";
}
