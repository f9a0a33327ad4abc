export { csvCell, csvRow } from "./csv.js";
export { markdownCell, renderTable, type Table } from "./markdown.js";
export { buildIntegerHistogram, ExactHistogram, type IntegerHistogramRequest } from "./histogram.js";
