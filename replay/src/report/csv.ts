/** A parsed CSV file: the header cells and one object per data line, keyed by header name. */
export interface CsvTable {
  readonly header: readonly string[];
  readonly rows: readonly CsvRow[];
}

export interface CsvRow {
  /** 1-based line number in the file. */
  readonly line: number;
  readonly cells: Readonly<Record<string, string>>;
}

export class CsvError extends Error {}

/**
 * Parses RFC 4180-style CSV (quoted cells with "" escapes, \n or \r\n line ends). Empty lines are
 * skipped. Every data line must have as many cells as the header; `required` header names must be
 * present.
 */
export function parseCsv(text: string, required: readonly string[] = []): CsvTable {
  const lines = splitRecords(text);
  const first = lines.find((l) => !(l.cells.length === 1 && l.cells[0] === ""));
  if (!first) throw new CsvError("empty file (no header line)");
  const header = first.cells.map((c) => c.trim());
  const missing = required.filter((name) => !header.includes(name));
  if (missing.length > 0) {
    throw new CsvError(`line ${first.line}: header lacks ${missing.join(", ")} (header: ${header.join(",")})`);
  }
  const rows: CsvRow[] = [];
  for (const l of lines) {
    if (l === first) continue;
    if (l.cells.length === 1 && l.cells[0]!.trim() === "") continue;
    if (l.cells.length !== header.length) {
      throw new CsvError(`line ${l.line}: ${l.cells.length} cells, the header has ${header.length}`);
    }
    const cells: Record<string, string> = {};
    header.forEach((name, i) => {
      cells[name] = l.cells[i]!;
    });
    rows.push({ line: l.line, cells });
  }
  return { header, rows };
}

function splitRecords(text: string): { line: number; cells: string[] }[] {
  const out: { line: number; cells: string[] }[] = [];
  let cells: string[] = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === "\n") line++;
        cell += ch;
      }
      continue;
    }
    if (ch === '"' && cell === "") quoted = true;
    else if (ch === ",") {
      cells.push(cell);
      cell = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      cells.push(cell);
      out.push({ line: recordLine, cells });
      cells = [];
      cell = "";
      line++;
      recordLine = line;
    } else cell += ch;
  }
  if (quoted) throw new CsvError(`line ${recordLine}: unterminated quoted cell`);
  if (cell !== "" || cells.length > 0) {
    cells.push(cell);
    out.push({ line: recordLine, cells });
  }
  return out;
}
