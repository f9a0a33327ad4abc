/**
 * Whole-number limits read from environment variables, as every component's and host's
 * `…FromEnv(env)` reads them: unset or blank variables are left out; any other value must be a
 * whole number at or above its minimum, or `fail` is called with a message naming the variable.
 */
export function wholeNumbersFromEnv<K extends string>(
  env: NodeJS.ProcessEnv,
  variables: Readonly<Record<K, string>>,
  minimum: (key: K) => number,
  fail: (message: string) => Error,
): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const key of Object.keys(variables) as K[]) {
    const name = variables[key];
    const raw = env[name]?.trim();
    if (raw === undefined || raw === "") continue;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < minimum(key)) {
      throw fail(`${name} must be a whole number ≥ ${minimum(key)}, got "${raw}"`);
    }
    out[key] = value;
  }
  return out;
}
