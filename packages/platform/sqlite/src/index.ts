export { openDurableSqlite } from "./open.js";
export type { DurableSqliteOptions } from "./open.js";
