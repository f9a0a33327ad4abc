import { describe, expect, it } from "vitest";
import { count, ratio, renderTable, sig } from "../src/table.js";

describe("renderTable", () => {
  it("renders padded Markdown with the first column left-aligned and the others right-aligned", () => {
    const md = renderTable({ headers: ["Mode", "p50 µs"], rows: [["direct", "22.1"], ["gRPC, h2c", "1,293"]] });
    expect(md).toBe(
      [
        "| Mode      | p50 µs |",
        "|:----------|-------:|",
        "| direct    |   22.1 |",
        "| gRPC, h2c |  1,293 |",
      ].join("\n"),
    );
  });

  it("follows explicit alignment, pads short rows, escapes pipes and newlines", () => {
    const md = renderTable({ headers: ["a", "b", "c"], align: ["r", "l", "l"], rows: [["1", "x|y"], ["22", "two\nlines", "z"]] });
    expect(md.split("\n")).toEqual([
      "|   a | b         | c   |",
      "|----:|:----------|:----|",
      "|   1 | x\\|y      |     |",
      "|  22 | two lines | z   |",
    ]);
  });

  it("renders a header-only table and rejects rows wider than the header", () => {
    expect(renderTable({ headers: ["x"], rows: [] })).toBe("| x   |\n|:----|");
    expect(() => renderTable({ headers: ["x"], rows: [["1", "2"]] })).toThrow(/2 cells but the table has 1/);
    expect(() => renderTable({ headers: [], rows: [] })).toThrow(/at least one column/);
  });
});

describe("number formatting", () => {
  it("keeps 3 significant digits, whole numbers with separators from 1000, and a dash for missing values", () => {
    expect(sig(0.11734)).toBe("0.117");
    expect(sig(22.149)).toBe("22.1");
    expect(sig(313.4)).toBe("313");
    expect(sig(1293.4)).toBe("1,293");
    expect(sig(0)).toBe("0");
    expect(sig(null)).toBe("–");
    expect(sig(Number.NaN)).toBe("–");
    expect(ratio(45, 15)).toBe("3.00×");
    expect(ratio(1, 0)).toBe("–");
    expect(count(12345.6)).toBe("12,346");
  });
});
