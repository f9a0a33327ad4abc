/** A Markdown table: one header row and cells as text. */
export interface Table {
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Per column: "l" (default for the first column) or "r" (default for the others). */
  readonly align?: readonly ("l" | "r")[];
}

/**
 * The table as GitHub Markdown, columns padded to equal width so it also reads as plain text.
 * A row shorter than the header is padded with empty cells; `|` in a cell is escaped.
 */
export function renderTable(table: Table): string {
  const cols = table.headers.length;
  if (cols === 0) throw new Error("a table needs at least one column");
  const esc = (s: string) => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
  const rows = table.rows.map((r) => {
    if (r.length > cols) throw new Error(`a row has ${r.length} cells but the table has ${cols} columns`);
    return Array.from({ length: cols }, (_, i) => esc(r[i] ?? ""));
  });
  const head = table.headers.map(esc);
  const align = Array.from({ length: cols }, (_, i) => table.align?.[i] ?? (i === 0 ? "l" : "r"));
  const width = head.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const pad = (s: string, i: number) => (align[i] === "r" ? s.padStart(width[i]!) : s.padEnd(width[i]!));
  const line = (cells: string[]) => `| ${cells.map(pad).join(" | ")} |`;
  const rule = `|${width.map((w, i) => (align[i] === "r" ? `${"-".repeat(w + 1)}:` : `:${"-".repeat(w + 1)}`)).join("|")}|`;
  return [line(head), rule, ...rows.map(line)].join("\n");
}

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
