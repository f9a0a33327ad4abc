/** `?seed=<int64>` from a query string; undefined when absent or not a valid int64. */
export function seedFromUrl(search: string): bigint | undefined {
  const raw = new URLSearchParams(search).get("seed");
  if (raw === null || !/^-?\d{1,19}$/.test(raw)) return undefined;
  const seed = BigInt(raw);
  return seed >= -(2n ** 63n) && seed < 2n ** 63n ? seed : undefined;
}
