export { renderTable, type Table } from "@flaplab/report-kit/markdown";

/** A number with `digits` significant digits (fixed notation; whole numbers from 10^digits up). */
export function sig(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 10 ** digits) return Math.round(value).toLocaleString("en-US");
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(abs)));
  return value.toFixed(decimals);
}

/** A ratio like "1.23×". */
export function ratio(value: number | null | undefined, base: number | null | undefined): string {
  if (value === null || value === undefined || base === null || base === undefined || base === 0) return "–";
  return `${sig(value / base)}×`;
}

/** A whole count with thousands separators. */
export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** The p50, p99, p99.9 and max cells of a latency summary. */
export function tailCells(p: { readonly p50: number | null; readonly p99: number | null; readonly p999: number | null; readonly max: number | null }): string[] {
  return [sig(p.p50), sig(p.p99), sig(p.p999), sig(p.max)];
}
