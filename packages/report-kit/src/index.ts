export { csvCell, csvRow } from "./csv.js";
export { markdownCell, renderTable, type Table } from "./markdown.js";
export { ExactHistogram } from "./histogram.js";
