import { describe, expect, it } from "vitest";
import { csvCell, csvRow, ExactHistogram, renderTable } from "../src/index.js";

describe("csvCell", () => {
  it("quotes cells with quotes, commas and line breaks, doubling quotes", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell("cr\r")).toBe('"cr\r"');
    expect(csvCell(1.5)).toBe("1.5");
    expect(csvCell(null)).toBe("");
    expect(csvRow(["a", 1, null, "x,y"])).toBe('a,1,,"x,y"');
  });
});

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

  it("renders compact tables unpadded with a plain rule", () => {
    const md = renderTable({ headers: ["run", "score"], rows: [["run-001", "12"], ["a|b", "3"]], compact: true });
    expect(md.split("\n")).toEqual(["| run | score |", "|---|---:|", "| run-001 | 12 |", "| a\\|b | 3 |"]);
  });

  it("renders a header-only table and rejects rows wider than the header", () => {
    expect(renderTable({ headers: ["x"], rows: [] })).toBe("| x   |\n|:----|");
    expect(() => renderTable({ headers: ["x"], rows: [["1", "2"]] })).toThrow(/2 cells but the table has 1/);
    expect(() => renderTable({ headers: [], rows: [] })).toThrow(/at least one column/);
  });
});

describe("ExactHistogram", () => {
  it("has exact count, sum, min, max and mean, and percentiles within HdrHistogram's 3 digits", () => {
    const h = new ExactHistogram();
    expect(h.percentile(50)).toBeNull();
    expect(h.min).toBeNull();
    for (let v = 1; v <= 10_000; v++) h.record(v);
    expect(h.samples).toBe(10_000);
    expect(h.sum).toBe(50_005_000);
    expect(h.min).toBe(1);
    expect(h.max).toBe(10_000);
    expect(h.mean).toBe(5000.5);
    expect(Math.abs(h.percentile(50)! - 5000) / 5000).toBeLessThan(0.001);
    expect(Math.abs(h.percentile(99)! - 9900) / 9900).toBeLessThan(0.001);
    expect(h.percentile(100)).toBe(10_000);
  });

  it("rounds, counts negative and non-finite values as 0, merges and resets", () => {
    const a = new ExactHistogram();
    a.record(2.6);
    a.record(-4);
    a.record(Number.NaN);
    expect([a.samples, a.sum, a.min, a.max]).toEqual([3, 3, 0, 3]);
    const b = new ExactHistogram();
    b.record(1_000_000);
    a.add(b);
    a.add(new ExactHistogram());
    expect([a.samples, a.max, a.percentile(100)]).toEqual([4, 1_000_000, 1_000_000]);
    a.reset();
    expect([a.samples, a.sum, a.max, a.mean]).toEqual([0, 0, null, null]);
  });
});
