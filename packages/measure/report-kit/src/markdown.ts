/** A Markdown table: one header row and cells as text. */
export interface Table {
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Per column: "l" (default for the first column) or "r" (default for the others). */
  readonly align?: readonly ("l" | "r")[];
  /** Cells unpadded and a plain rule (`---`, `---:`): smaller files for long reports. */
  readonly compact?: boolean;
}

/** A cell's text with `|` escaped and line breaks as spaces. */
export function markdownCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/**
 * The table as GitHub Markdown, columns padded to equal width so it also reads as plain text.
 * A row shorter than the header is padded with empty cells; `|` in a cell is escaped.
 */
export function renderTable(table: Table): string {
  const cols = table.headers.length;
  if (cols === 0) throw new Error("a table needs at least one column");
  const rows = table.rows.map((r) => {
    if (r.length > cols) throw new Error(`a row has ${r.length} cells but the table has ${cols} columns`);
    return Array.from({ length: cols }, (_, i) => markdownCell(r[i] ?? ""));
  });
  const head = table.headers.map(markdownCell);
  const align = Array.from({ length: cols }, (_, i) => table.align?.[i] ?? (i === 0 ? "l" : "r"));
  if (table.compact) {
    const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
    return [line(head), `|${align.map((a) => (a === "r" ? "---:" : "---")).join("|")}|`, ...rows.map(line)].join("\n");
  }
  const width = head.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const pad = (s: string, i: number) => (align[i] === "r" ? s.padStart(width[i]!) : s.padEnd(width[i]!));
  const line = (cells: string[]) => `| ${cells.map(pad).join(" | ")} |`;
  const rule = `|${width.map((w, i) => (align[i] === "r" ? `${"-".repeat(w + 1)}:` : `:${"-".repeat(w + 1)}`)).join("|")}|`;
  return [line(head), rule, ...rows.map(line)].join("\n");
}
