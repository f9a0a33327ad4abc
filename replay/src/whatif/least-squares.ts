// Least squares with every coefficient ≥ 0, for the few (≤ 4) terms a CPU figure has: every subset
// of the terms is solved by its normal equations, and the feasible solution with the smallest
// squared error wins. Exact for so few terms, and free of iteration limits.

/** Coefficients c ≥ 0 minimising Σ (y_i − Σ_j c_j · columns[j][i])²; a term no row moves gets 0. */
export function nonNegativeLeastSquares(columns: readonly (readonly number[])[], y: readonly number[]): number[] {
  const k = columns.length;
  if (k > 8) throw new Error(`nonNegativeLeastSquares: ${k} terms is more than the subsets it tries`);
  let best: { c: number[]; sse: number } = { c: new Array<number>(k).fill(0), sse: sse(columns, y, new Array<number>(k).fill(0)) };
  for (let mask = 1; mask < 1 << k; mask++) {
    const terms = [...Array(k).keys()].filter((j) => mask & (1 << j));
    const solved = solveNormal(terms.map((j) => columns[j]!), y);
    if (solved === null || solved.some((v) => v < 0)) continue;
    const c = new Array<number>(k).fill(0);
    for (const [i, j] of terms.entries()) c[j] = solved[i]!;
    const e = sse(columns, y, c);
    if (e < best.sse - 1e-12 * Math.max(1, best.sse)) best = { c, sse: e };
  }
  return best.c;
}

function sse(columns: readonly (readonly number[])[], y: readonly number[], c: readonly number[]): number {
  return y.reduce((s, yi, i) => s + (yi - columns.reduce((t, col, j) => t + c[j]! * col[i]!, 0)) ** 2, 0);
}

/** The normal equations' solution, or null when the columns are (nearly) dependent. */
function solveNormal(columns: readonly (readonly number[])[], y: readonly number[]): number[] | null {
  const k = columns.length;
  const a = columns.map((ci) => [...columns.map((cj) => ci.reduce((s, v, r) => s + v * cj[r]!, 0)), ci.reduce((s, v, r) => s + v * y[r]!, 0)]);
  const scale = Math.max(...a.map((row, i) => Math.abs(row[i]!)));
  if (!(scale > 0)) return null;
  for (let col = 0; col < k; col++) {
    let pivot = col;
    for (let r = col + 1; r < k; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    if (Math.abs(a[pivot]![col]!) < 1e-9 * scale) return null;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    for (let r = 0; r < k; r++) {
      if (r === col) continue;
      const f = a[r]![col]! / a[col]![col]!;
      for (let c = col; c <= k; c++) a[r]![c]! -= f * a[col]![c]!;
    }
  }
  return a.map((row, i) => row[k]! / row[i]!);
}
